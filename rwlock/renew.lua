-- Extend one hold's lease to at least the watchdog lease from now (the
-- watchdog's renewal), while a watchdog acquisition of it lives; never
-- shorten a longer explicit lease.
-- KEYS[1] H  KEYS[2] L  ARGV[1] hold ('w:<owner>' or 'r:<owner>')  ARGV[2] lease ms
-- Reply: 1 extended, 0 the hold is gone or holds no watchdog acquisition.
local now = rw_prune(KEYS[1], KEYS[2])
local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
if not a or not string.find(a, '=w', 1, true) then return 0 end
local e = now + tonumber(ARGV[2])
if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or 0) < e then
  redis.call('ZADD', KEYS[2], rw_int(e), ARGV[1])
  rw_expire(KEYS[1], KEYS[2], now)
end
return 1
