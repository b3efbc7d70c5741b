-- Acquire or re-enter the reentrant lock.
-- KEYS[1] the lock: a hash of owner -> hold count, plus '#t' -> fencing token
-- KEYS[2] the name's fencing counter
-- KEYS[3] the waiter set
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will not wait)
-- ARGV[4] waiter window ms  ARGV[5] fencing counter lifetime ms
-- Reply: {token, hold count} when acquired or re-entered;
--        {0, remaining lease ms (-1: no expiry)} when another owner holds it.
-- The free lock is checked first: it is the common case and costs the fewest calls.
if redis.call('EXISTS', KEYS[1]) == 0 then
  local tok, s = ds_token(KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ds_unwait(KEYS[3], ARGV[3])
  return {tok, 1}
end
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#t')
if v[1] then
  local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ds_unwait(KEYS[3], ARGV[3])
  return {tonumber(v[2]), n}
end
local ttl = redis.call('PTTL', KEYS[1])
ds_wait(KEYS[3], ARGV[3], ttl, ARGV[4])
return {0, ttl}
