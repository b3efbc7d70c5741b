-- The full path of permit_releasefast.lua (its arguments and reply).
local now = sem_prune()
if redis.call('ZREM', KEYS[2], ARGV[3]) == 0 then
  if ds_finished(KEYS[5], ARGV[3]) then return 2 end
  ds_done(KEYS[5], ARGV[3], now, ARGV[4])
  return -1
end
ds_done(KEYS[5], ARGV[3], now, ARGV[4])
sem_wake(sem_add(1), 1)
return 1
