-- Delete the lock whoever holds it and notify waiters.
-- KEYS[1] the lock  KEYS[2] the waiter set  ARGV[1] channel  ARGV[2] publish command
-- Reply: 1 when the lock was held, 0 when it was free.
ds_kind(KEYS[1], 'mutex')
if redis.call('DEL', KEYS[1]) == 1 then
  ds_notify(KEYS[2], ARGV[1], '', ARGV[2])
  return 1
end
return 0
