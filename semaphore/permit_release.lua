-- Return a permit to the pool and wake a waiter, once per permit id.
-- ARGV[3] permit id  ARGV[4] ms to remember the release
-- Reply (as ds_release): 1 released; 2 released before (a retried release
-- whose first reply was lost); -1 not held: unknown, or its lease ended (it
-- went back to the pool then, once); the id is then finished, so that an
-- acquisition of it still on the wire is refused when it arrives.
local now = sem_prune()
if redis.call('ZREM', KEYS[2], ARGV[3]) == 0 then
  if ds_finished(KEYS[5], ARGV[3]) then return 2 end
  ds_done(KEYS[5], ARGV[3], now, ARGV[4])
  return -1
end
ds_done(KEYS[5], ARGV[3], now, ARGV[4])
sem_wake(sem_add(1), 1)
return 1
