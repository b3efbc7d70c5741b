-- Delete the lock whoever holds it and wake the head of the queue.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  ARGV[1] channel  ARGV[2] publish command
-- ARGV[3] the hand-off lease ms (fl_wake_head)
-- Reply: 1 when the lock was held, 0 when it was free.
ds_kind(KEYS[1], 'fairlock')
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
fl_prune(KEYS[2], KEYS[3])
fl_wake_head(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
return 1
