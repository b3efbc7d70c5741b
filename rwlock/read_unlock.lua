-- Release one read hold count of the owner. When that frees the lock, wake
-- one waiting writer (the one that registered last, the likeliest alive), or
-- the waiting readers when no writer waits.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- ARGV[1] owner  ARGV[2] release request id (the same on a retried release)
-- ARGV[3] channel  ARGV[4] publish command (PUBLISH or SPUBLISH)
-- Reply: 1 the owner's read hold is released; 0 a hold count remains (or this
-- request was applied before); -1 the owner holds no read lock.
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], 'r:' .. ARGV[1], ARGV[2], now)
if r == 1 and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', rw_int(now))
  local last = redis.call('ZRANGE', KEYS[4], -1, -1)
  if #last > 0 then
    redis.call(ARGV[4], ARGV[3], 'w:' .. last[1])
  else
    ds_notify(KEYS[3], ARGV[3], '', ARGV[4])
  end
end
return r
