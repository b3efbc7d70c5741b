-- Extend one hold's lease to at least the watchdog lease from now (the
-- watchdog's renewal), while a watchdog acquisition of it lives; never
-- shorten a longer explicit lease.
-- KEYS[1] H  KEYS[2] L  ARGV[1] hold ('w:<owner>' or 'r:<owner>')  ARGV[2] lease ms
-- Reply: 1 extended, 0 the hold is gone or holds no watchdog acquisition.
--
-- The common case first, before the helpers are defined: the hold's lease
-- has not ended and a watchdog acquisition of it lives. Its end moves to
-- now + lease when that is later, and both keys live at least that long
-- (they live until the last lease ends: another's may be longer). A hold
-- whose lease ended goes on to the full path, which drops it.
local t = redis.call('TIME')
local now = ds_ms(t)
local cur = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or 0)
if cur > now then
  local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
  if not a or not string.find(a, '=w', 1, true) then return 0 end
  local lease = tonumber(ARGV[2])
  if cur < now + lease then
    redis.call('ZADD', KEYS[2], ds_int(now + lease), ARGV[1])
    for i = 1, 2 do
      if redis.call('PTTL', KEYS[i]) < lease then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
    end
  end
  do return 1 end
end
