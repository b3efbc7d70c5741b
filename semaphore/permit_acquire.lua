-- Take one permit of the permit semaphore under a new permit id with a lease.
-- ARGV[3] permit id  ARGV[4] lease ms  ARGV[5] waiter id ('' when the caller
-- will not wait)  ARGV[6] waiter window ms
-- Reply: 0 granted; otherwise refused (the waiter is registered) with the ms
-- until the earliest held permit's lease ends, when trying again may succeed,
-- or -1 when no permit is held.
local now = sem_prune()
local v = sem_avail()
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if v >= 1 then
  local exp = now + tonumber(ARGV[4])
  redis.call('DECR', KEYS[1])
  redis.call('ZADD', KEYS[2], exp, ARGV[3])
  ds_unwait(KEYS[3], ARGV[5])
  if v == 1 and (first[2] == nil or tonumber(first[2]) > exp) then
    -- Waiters sleep until the earliest lease end they were told, and this
    -- lease ends sooner: wake them to learn it.
    ds_notify(KEYS[3], ARGV[1], '', ARGV[2])
  end
  return 0
end
local retry = -1
if first[2] then retry = tonumber(first[2]) - now end
sem_wait(ARGV[5], '1', retry, ARGV[6])
return retry
