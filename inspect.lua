-- Read everything stored under one name at one instant of the server clock
-- (Client.Inspect). Changes nothing.
-- KEYS[1] the main key  KEYS[2] the waiter set (mutex, semaphore, latch)
-- KEYS[3] the fair lock's queue  KEYS[4] its waiters' window ends
-- KEYS[5] the read-write lock's hold leases  KEYS[6] its waiting readers
-- KEYS[7] its waiting writers  KEYS[8] the permit semaphore's held permits
-- KEYS[9] the counting semaphore's waiters' needs  KEYS[10] the mutex's
-- waiter entries (KEYS[2] is then its queue, by arrival: see mutex/mx.lua)
-- KEYS[11] the permit semaphore's waiters  KEYS[12] the election's
-- candidates, head first  KEYS[13] their window ends (see election/queue.lua)
-- The kind is the main key's kind marker '#k' (every primitive's main key
-- is a hash that carries it) or, when the main key is absent, a key only one
-- kind makes (a fair lock's queue; a permit semaphore's permits or needs; a
-- counting semaphore's needs: waiters of a semaphore never set; an
-- election's candidates while nobody leads).
-- Reply: {kind ('' none fits), the main key's type, ttl, token, count,
--        available, owners, waiters, value, since}:
--   ttl       the lock's or the leader's remaining lease in ms (-1 no
--             expiry, 0 none)
--   token     the mutex's or fair lock's fencing token, the leader's term
--             ('' none)
--   count     the latch's count ('' none)
--   available the semaphores' available permits, counting held permits
--             whose lease ended (the next script returns them)
--   owners    {owner, mode, hold count, token, ms left of its own lease}
--             per live hold ('' and 0 where holds have none)
--   waiters   {waiter, mode, ms left of its registration} per live waiter
--             (candidate), in queue order where there is a queue, else by
--             window end
--   value     the value the election's leader announced ('' none)
--   since     the server ms since when it leads ('' nobody leads)
local now = ds_now_ms()
local t = redis.call('TYPE', KEYS[1])['ok']
local kind, ttl, token, count, avail, value, since = '', 0, '', '', 0, '', ''
local owners, waiters = {}, {}
local h = {}

local function waiter(id, mode, left)
  if left > 0 then waiters[#waiters + 1] = {id, mode, left} end
end

-- The waiters of waiter set z, all waiting for mode.
local function waitset(z, mode)
  local r = redis.call('ZRANGE', z, 0, -1, 'WITHSCORES')
  for i = 1, #r, 2 do waiter(r[i], mode, tonumber(r[i + 1]) - now) end
end

if t == 'hash' then
  local f = redis.call('HGETALL', KEYS[1])
  for i = 1, #f, 2 do h[f[i]] = f[i + 1] end
  kind = h['#k'] or ''
elseif t == 'none' then
  if redis.call('EXISTS', KEYS[3]) == 1 then
    kind = 'fairlock'
  elseif redis.call('EXISTS', KEYS[8], KEYS[11]) > 0 then
    kind = 'permitsemaphore'
  elseif redis.call('EXISTS', KEYS[9]) == 1 then
    kind = 'semaphore'
  elseif redis.call('EXISTS', KEYS[12]) == 1 then
    kind = 'election'
  end
end

if kind == 'mutex' or kind == 'fairlock' or kind == 'election' then
  if t == 'hash' then ttl = redis.call('PTTL', KEYS[1]) end
  token = h['#t'] or ''
  if kind == 'election' and t == 'hash' then value, since = h['#v'] or '', h['#s'] or '' end
  for m in pairs(h) do
    if string.sub(m, 1, 1) ~= '#' then
      local n = #ds_ledger(KEYS[1], m, now)
      if n > 0 then owners[#owners + 1] = {m, '', n, '', 0} end
    end
  end
  if kind == 'mutex' then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      local e = redis.call('HGET', KEYS[10], id)
      if e then waiter(id, '', tonumber(string.match(e, '^(%S+)')) - now) end
    end
  else
    local q, d = KEYS[3], KEYS[4]
    if kind == 'election' then q, d = KEYS[12], KEYS[13] end
    for _, id in ipairs(redis.call('LRANGE', q, 0, -1)) do
      local e = redis.call('ZSCORE', d, id)
      if e then waiter(id, '', tonumber(e) - now) end
    end
  end
elseif kind == 'rwlock' then
  local l = redis.call('ZRANGE', KEYS[5], 0, -1, 'WITHSCORES')
  for i = 1, #l, 2 do
    local m, left = l[i], tonumber(l[i + 1]) - now
    if left > 0 then
      local mode = 'read'
      if string.sub(m, 1, 1) == 'w' then mode = 'write' end
      owners[#owners + 1] = {string.sub(m, 3), mode, #ds_ledger(KEYS[1], m, now), h['t:' .. m] or '', left}
      ttl = math.max(ttl, left)
    end
  end
  waitset(KEYS[7], 'write')
  waitset(KEYS[6], 'read')
elseif kind == 'latch' then
  count = h['n'] or '0'
  waitset(KEYS[2], '')
elseif kind == 'semaphore' or kind == 'permitsemaphore' then
  avail = tonumber(h['n'] or '0')
  local p = redis.call('ZRANGE', KEYS[8], 0, -1, 'WITHSCORES')
  for i = 1, #p, 2 do
    local left = tonumber(p[i + 1]) - now
    if left > 0 then
      owners[#owners + 1] = {p[i], '', 1, '', left}
    else
      avail = avail + 1
    end
  end
  if kind == 'semaphore' then
    waitset(KEYS[2], '')
  else
    -- The permit semaphore's waiters queue; their windows end as their
    -- entries say.
    for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      local e = redis.call('HGET', KEYS[11], id)
      if e then waiter(id, '', tonumber(string.match(e, '^(%d+)')) - now) end
    end
  end
else
  kind = ''
end
return {kind, t, ttl, token, count, avail, owners, waiters, value, since}
