-- Extend the owner's lease to at least the watchdog lease from now (the
-- watchdog's renewal), while a watchdog acquisition of it lives; never
-- shorten a longer explicit lease. It uses no helper: the whole script
-- runs before the library is defined.
-- KEYS[1] the lock  ARGV[1] owner  ARGV[2] lease ms
-- Reply: 1 extended, 0 the owner holds no watchdog acquisition of the lock.
local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
if not a or not string.find(a, '=w', 1, true) then return 0 end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
do return 1 end
