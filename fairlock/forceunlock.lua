-- Delete the lock whoever holds it and wake the head of the queue.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  ARGV[1] channel  ARGV[2] publish command
-- ARGV[3] the hand-off lease ms (dsq_wake)
-- Reply: 1 when the lock was held, 0 when it was free.
ds_kind(KEYS[1], 'fairlock')
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
dsq_prune(KEYS[2], KEYS[3])
dsq_wake(KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
return 1
