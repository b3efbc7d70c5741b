-- Delete the lock whoever holds it, tell its holder's Client on its control
-- channel (ds_tell_taken), and wake the head of the queue, once heads whose
-- process died are passed over (dsq_head).
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  ARGV[1] channel  ARGV[2] publish command
-- ARGV[3] the hand-off lease ms (dsq_wake)  ARGV[4] the prefix of the
-- control channels
-- Reply: 1 when the lock was held, 0 when it was free.
ds_kind(KEYS[1], 'fairlock')
ds_tell_taken(ARGV[4], ds_holders(KEYS[1], KEYS[1]))
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
dsq_prune(KEYS[2], KEYS[3])
dsq_head(KEYS[2], KEYS[3], ARGV[1], ARGV[2], nil, redis.call('LINDEX', KEYS[2], 0))
dsq_wake(KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], false, true)
return 1
