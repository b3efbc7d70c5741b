-- A waiter gives up (its context ended or its wait budget was spent): remove
-- it from the queue and its window, and if it was the head of the queue and
-- the lock is free, wake the new head.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] waiter id  ARGV[2] channel  ARGV[3] publish command
-- ARGV[4] the hand-off lease ms (dsq_wake)
-- Reply: 1 when the waiter was queued, 0 when it was not.
return dsq_leave(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
