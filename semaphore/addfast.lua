-- Add n permits (n < 0 removes them; available may become negative): the
-- counting semaphore's Release and AddPermits. Wakes the waiters the
-- available permits can now satisfy.
-- ARGV[3] n  ARGV[4] 'r' a release, which needs the permits set, or 'a'
-- Reply: {1, available after}; {0, available} refused, since available plus
-- held would exceed 2^53, or available would fall below -2^53. (The bounds
-- are compared before adding: beyond 2^53, Lua sums are not exact.)
-- {-1, 0}: a release, refused since the permits are not set (never set,
-- deleted, or their time to live ended): it would make a semaphore of the
-- wrong size and no time to live.
--
-- The common case comes first, before the helpers are defined: a release
-- (n > 0) within the bound on a semaphore whose permits were set, that
-- nobody waits for (no need registered: nobody to wake).
if tonumber(ARGV[3]) > 0 and redis.call('EXISTS', KEYS[4]) == 0 then
  local v = redis.call('HMGET', KEYS[1], 'n', '#k', '#x')
  if v[2] == ARGV[#ARGV] and tonumber(v[1] or '0') <= 9007199254740992 - tonumber(ARGV[3]) - redis.call('ZCARD', KEYS[2]) then
    local n = redis.call('HINCRBY', KEYS[1], 'n', ARGV[3])
    if v[3] then redis.call('PEXPIRE', KEYS[1], v[3]) end -- its idle time to live (sem_used)
    return {1, n}
  end
end
