-- Extend the owner's lease (the watchdog's renewal).
-- KEYS[1] the lock  ARGV[1] owner  ARGV[2] lease ms
-- Reply: 1 extended, 0 the owner does not hold the lock.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
