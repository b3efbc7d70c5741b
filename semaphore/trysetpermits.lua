-- Set the number of permits to n if it was never set: available = n - held.
-- Wakes the waiters that can now proceed.
-- ARGV[3] n (0..2^53)  ARGV[4], when there is one before the hand-off
-- lease and the kind, the idle
-- time to live in ms (see sem_used)
-- Reply: 1 set, 0 already set (nothing changed).
sem_prune()
if sem_exists then return 0 end
local v = tonumber(ARGV[3]) - redis.call('ZCARD', KEYS[2])
if #ARGV > 5 then
  sem_idle = ARGV[4]
  redis.call('HSET', KEYS[1], '#x', sem_idle)
end
sem_put(v)
sem_give(v, v)
return 1
