-- Extend one hold's lease (the watchdog's renewal).
-- KEYS[1] H  KEYS[2] L  ARGV[1] hold ('w:<owner>' or 'r:<owner>')  ARGV[2] lease ms
-- Reply: 1 extended, 0 the hold is gone (its lease ended or it was released).
local now = rw_prune(KEYS[1], KEYS[2])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], rw_int(now + tonumber(ARGV[2])), ARGV[1])
rw_expire(KEYS[1], KEYS[2], now)
return 1
