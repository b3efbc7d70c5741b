-- Delete the lock whoever holds it and wake every waiter.
-- KEYS[1] the lock  KEYS[2] Q, the waiters (mx.lua)  ARGV[1] channel
-- ARGV[2] publish command
-- Reply: 1 when the lock was held, 0 when it was free.
if redis.call('DEL', KEYS[1]) == 1 then
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call(ARGV[2], ARGV[1], '') end
  return 1
end
return 0
