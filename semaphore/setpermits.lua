-- Set the number of permits to n whether or not it was set: available =
-- n - held (negative while more than n are held). Wakes the waiters that can
-- now proceed.
-- ARGV[3] n (0..2^53)
-- Reply: available after.
sem_prune()
local old = sem_avail()
local v = tonumber(ARGV[3]) - redis.call('ZCARD', KEYS[2])
sem_put(v)
sem_give(v, v - old)
return v
