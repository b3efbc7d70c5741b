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
-- The common cases come first, before the helpers are defined: a release
-- (n > 0) within the bound on a semaphore whose permits were set, that
-- nobody waits for (no need registered: nobody to wake); and, on the
-- counting semaphore (which holds no leases to return first: sem_prune),
-- one that wakes the waiters it can (sem_wake's work, inlined: the waiter
-- set is pruned and counted once for all the needs).
local counting = ARGV[#ARGV] == 'semaphore'
if tonumber(ARGV[3]) > 0 then
  local waited = redis.call('EXISTS', KEYS[4]) == 1
  local v = (counting or not waited) and redis.call('HMGET', KEYS[1], 'n', '#k', '#x')
  if v and v[2] == ARGV[#ARGV] and tonumber(v[1] or '0') <= 9007199254740992 - tonumber(ARGV[3]) - redis.call('ZCARD', KEYS[2]) then
    local n = redis.call('HINCRBY', KEYS[1], 'n', ARGV[3])
    if v[3] then redis.call('PEXPIRE', KEYS[1], v[3]) end -- its idle time to live (sem_used)
    if not waited or n <= 0 then return {1, n} end
    local t = redis.call('TIME')
    local now = ds_ms(t)
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
    local live -- whether the waiter set, pruned, is not empty
    for _, s in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
      local need = tonumber(s)
      if need <= n then
        if live == nil then
          redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
          live = redis.call('ZCARD', KEYS[3]) > 0
        end
        if not live then break end
        local ch = ARGV[1]
        if need > 1 then ch = ch .. ':' .. s end
        redis.call(ARGV[2], ch, 'n:' .. ds_int(math.min(tonumber(ARGV[3]), math.floor(n / need))))
      end
    end
    return {1, n}
  end
end
