-- A waiter gives up: forget it. The counting semaphore passes on a wake-up
-- it may have taken by waking the waiters the available permits can
-- satisfy. The permit semaphore gives back the permits a release may have
-- granted it (each finished, so that an attempt still on the wire is
-- refused), and grants what is available to the waiters left.
-- ARGV[3] waiter id  ARGV[4] (the permit semaphore) its permit ids,
-- separated by spaces  ARGV[5] ms to remember them finished
-- Reply: 1.
local now = sem_prune()
if ARGV[#ARGV] == 'permitsemaphore' then
  sem_punwait(ARGV[3])
  local back = 0
  for id in string.gmatch(ARGV[4], '%S+') do
    if redis.call('ZREM', KEYS[2], id) == 1 then
      back = back + 1
      ds_done(KEYS[5], id, now, ARGV[5])
    end
  end
  if back > 0 then sem_add(back) end
  sem_pgrant()
  return 1
end
ds_unwait(KEYS[3], ARGV[3])
local v = sem_avail()
sem_wake(v, v)
return 1
