-- Move the end of the explicit lease of one acquisition of a hold to lease
-- ms from now; the hold's lease covers the longest promise left.
-- KEYS[1] H  KEYS[2] L  ARGV[1] hold ('w:<owner>' or 'r:<owner>')
-- ARGV[2] acquisition id  ARGV[3] lease ms
-- Reply: 1 moved, 0 not a live explicit acquisition of the hold.
local now = rw_prune(KEYS[1], KEYS[2])
local ok, watch, last = ds_reset(KEYS[1], ARGV[1], ARGV[2], now, ARGV[3])
if not ok then return 0 end
local e = last
if watch then e = math.max(last, tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or 0)) end
redis.call('ZADD', KEYS[2], ds_int(e), ARGV[1])
rw_expire(KEYS[1], KEYS[2], now)
return 1
