-- The common case of unlockfast.lua when waiters queue: the lock, deleted
-- there, goes to the head of the queue (fu_grant), which leaves it.
if fu_grant then
  local g = fu_grant
  redis.call('LPOP', KEYS[2])
  redis.call('ZREM', KEYS[3], g[1])
  fl_give(KEYS[1], KEYS[5], ARGV[3], ARGV[4], ARGV[6], g[6], g[7], g[1], g[2], g[3], g[4], g[5], g[8])
  return 1
end
