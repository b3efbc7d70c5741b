-- A waiter gives up: forget it, and pass on a wake-up it may have taken by
-- waking the waiters the available permits can satisfy.
-- ARGV[3] waiter id
-- Reply: 1.
sem_prune()
ds_unwait(KEYS[3], ARGV[3])
local v = sem_avail()
sem_wake(v, v)
return 1
