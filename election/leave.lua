-- A candidate gives up (its context ended, its wait was spent): remove it
-- from the queue and its window; if it was the head and nobody leads, wake
-- the new head.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] candidate id  ARGV[2] the wake-up channel  ARGV[3] publish command
-- ARGV[4] hand-off ms (see dsq_wake)
-- Reply: 1 when the candidate was queued, 0 when it was not.
return dsq_leave(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
