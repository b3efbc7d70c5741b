-- Delete the lock whoever holds it, tell its holder's Client on its control
-- channel (ds_tell_taken), and wake the oldest waiter (mx_next, never
-- granting it).
-- KEYS[1] the lock  KEYS[2] Q  KEYS[3] E, the waiters (mx.lua)
-- KEYS[4] the fencing counter  ARGV[1] channel  ARGV[2] publish command
-- ARGV[3] hand-off lease ms  ARGV[4] the prefix of the control channels
-- Reply: 1 when the lock was held, 0 when it was free. The key of another
-- kind of primitive is refused (WRONGKIND).
ds_kind(KEYS[1], 'mutex')
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
ds_tell_taken(ARGV[4], ds_holders(KEYS[1], KEYS[1]))
mx_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], '1e18', ARGV[3])
return 1
