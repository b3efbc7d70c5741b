-- Release one hold count of the owner; delete the lock and wake one waiter
-- per subscribed process when it was the last (only one can take it; a woken
-- waiter that fails waits for the next release).
-- KEYS[1] the lock  KEYS[2] the waiter set
-- ARGV[1] owner  ARGV[2] release request id (the same on a retried release)
-- ARGV[3] channel  ARGV[4] publish command (PUBLISH or SPUBLISH)
-- Reply: 1 released (the lock is free), 0 still held by the owner (a hold
-- count remains, or this request was applied before), -1 not held by the owner.
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#u')
if not v[1] then return -1 end
if v[2] == ARGV[2] then return 0 end
local n = tonumber(v[1]) - 1
if n > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], n, '#u', ARGV[2])
  return 0
end
redis.call('DEL', KEYS[1])
ds_notify(KEYS[2], ARGV[3], 'n:1', ARGV[4])
return 1
