-- Add n permits (n < 0 removes them; available may become negative): the
-- counting semaphore's Release and AddPermits. Wakes the waiters the
-- available permits can now satisfy.
-- ARGV[3] n
-- Reply: {1, available after}; {0, available} refused, since available plus
-- held would exceed 2^53, or available would fall below -2^53. (The bounds
-- are compared before adding: beyond 2^53, Lua sums are not exact.)
sem_prune()
local n = tonumber(ARGV[3])
local v = sem_avail()
if (n > 0 and v + redis.call('ZCARD', KEYS[2]) > sem_max - n) or (n < 0 and v < -sem_max - n) then
  return {0, v}
end
v = sem_add(ARGV[3])
sem_wake(v, n)
return {1, v}
