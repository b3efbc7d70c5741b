-- Return a permit to the pool and wake a waiter.
-- ARGV[3] permit id
-- Reply: 1 released; 0 not held: unknown, released before, or its lease
-- ended (it went back to the pool then, once).
sem_prune()
if redis.call('ZREM', KEYS[2], ARGV[3]) == 0 then return 0 end
sem_wake(redis.call('INCR', KEYS[1]), 1)
return 1
