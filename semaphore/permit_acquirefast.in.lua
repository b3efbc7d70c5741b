-- Take n permits of the permit semaphore at once (all or none), each under
-- its own new permit id with a lease, once per set of ids.
-- ARGV[3] the permit ids, separated by spaces  ARGV[4] lease ms
-- ARGV[5] waiter id ('' when the caller will not wait)  ARGV[6] waiter window ms
-- ARGV[7] 'l' when the waiter listens on its Client's channel, else ''
-- (sem_pwait)
-- Reply: {1, 0} granted (now, or by an earlier attempt with the same ids,
-- whose leases are then renewed from now, as a new grant's would be, so the
-- caller may count them from this attempt's send);
-- {0, ms, server ms} refused (the waiter is queued: a release may grant it
-- the permits, sem_pgrant), with the ms until the earliest held permit's
-- lease ends, when trying again may succeed, or -1 when no permit is held;
-- {-4, ms, server ms} likewise but the permits were never set; {-2, 0} the
-- ids were released or given up before.
--
-- The common cases come first, before the helpers are defined: a caller
-- that will not wait takes one permit, not the last available one (taking
-- the last may have to wake a waiter), by a permit id neither granted nor
-- finished before; a waiter for one permit, by such an id, when none is
-- available and no held lease has ended (sem_prune would return it), is
-- queued (sem_pwait, inlined) and refused. Anything else goes on to
-- the full path.
if ARGV[5] == '' and not string.find(ARGV[3], ' ', 1, true) then
  local v = redis.call('HMGET', KEYS[1], 'n', '#k', '#x')
  if v[2] == ARGV[#ARGV] and tonumber(v[1] or '0') > 1
      and not redis.call('ZSCORE', KEYS[2], ARGV[3]) and not redis.call('ZSCORE', KEYS[5], ARGV[3]) then
    redis.call('HINCRBY', KEYS[1], 'n', -1)
    if v[3] then redis.call('PEXPIRE', KEYS[1], v[3]) end -- its idle time to live (sem_used)
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[2], ds_int(ds_ms(t) + tonumber(ARGV[4])), ARGV[3])
    return {1, 0}
  end
end
if ARGV[5] ~= '' and not string.find(ARGV[3], ' ', 1, true) then
  local v = redis.call('HMGET', KEYS[1], 'n', '#k')
  if v[2] == ARGV[#ARGV] and tonumber(v[1] or '0') <= 0 then
    local t = redis.call('TIME')
    local now = ds_ms(t)
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    if (not first[2] or tonumber(first[2]) > now)
        and not redis.call('ZSCORE', KEYS[2], ARGV[3]) and not redis.call('ZSCORE', KEYS[5], ARGV[3]) then
      local retry = sem_pwait(ARGV[5], ARGV[3], ARGV[4], ARGV[7], tonumber(ARGV[6]), first, t, now)
      return {0, retry, now}
    end
  end
end
