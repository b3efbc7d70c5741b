-- Helpers of the semaphore scripts, placed after distsync's shared library.
-- Every semaphore script has the same keys, first two arguments and last:
-- KEYS[1] the semaphore: a hash, '#k' -> its kind, 'n' -> the available
--         permits (an integer); absent when never set (0 available)
-- KEYS[2] the held permits of the permit semaphore: a sorted set
--         permit id -> end of its lease (ms, server clock); empty for the
--         counting semaphore
-- KEYS[3] the waiter set: waiter id -> end of its window (the counting
--         semaphore's); waiter id -> server µs of its first registration
--         (the permit semaphore's queue, oldest first: sem_pgrant)
-- KEYS[4] the counting semaphore's ':needs', the needs of its waiters: a
--         sorted set need -> end of its window; the permit semaphore's
--         ':pneeds', its waiters: a hash waiter id -> '<end of its window>
--         <lease ms>[l] <permit ids>', with 'l' when the waiter listens on
--         its Client's channel (sem_pwait). A name whose permits were
--         never set tells by it which kind waits.
-- KEYS[5] the finished acquisitions (ds_done): permit ids released or given
--         up, and 'g:'..id for a counting acquisition that took its permits
-- ARGV[1] the channel of waiters needing one permit; a waiter needing n > 1
--         listens on ARGV[1] .. ':' .. n
-- ARGV[2] the publish command (PUBLISH or SPUBLISH)
-- ARGV[#ARGV - 1] the hand-off lease ms (core.Config.HandoffLease)
-- ARGV[#ARGV] the kind: 'semaphore' (counting) or 'permitsemaphore'. Each
--         script first calls sem_prune (or sem_kind), which refuses a
--         semaphore of the other kind, or any other primitive, with
--         WRONGKIND before anything is written.

-- The largest count a script accepts: Lua numbers are doubles, exact to 2^53.
local sem_max = 9007199254740992

-- Whether KEYS[1] exists: the permits were set (known after sem_kind; every
-- semaphore hash carries its kind).
local sem_exists = false

-- The idle time to live of a semaphore set with one ('#x', ms; see
-- sem_used), false for the others (known after sem_kind).
local sem_idle = false

-- Refuse another kind (see above); learn whether the permits were set, and
-- their idle time to live.
local function sem_kind()
  local f = redis.call('HMGET', KEYS[1], '#k', '#x')
  if f[1] and f[1] ~= ARGV[#ARGV] then
    error({err = 'WRONGKIND ' .. f[1] .. ' ' .. ARGV[#ARGV] .. ' ' .. KEYS[1]})
  end
  sem_exists, sem_idle = f[1] ~= false, f[2]
end

-- The count was written (an acquisition, a release, a change of the
-- permits): a semaphore with an idle time to live lives that long from now.
local function sem_used()
  if sem_idle then redis.call('PEXPIRE', KEYS[1], sem_idle) end
end

local function sem_avail()
  return tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
end

-- Add d (an integer: a string, or a number of a few digits) to the available
-- permits, making the semaphore, with its kind, if its permits were never
-- set. Every write of the count is sem_add or sem_put. Returns the available
-- permits after.
local function sem_add(d)
  local v = redis.call('HINCRBY', KEYS[1], 'n', d)
  if not sem_exists then
    redis.call('HSET', KEYS[1], '#k', ARGV[#ARGV])
    sem_exists = true
  end
  sem_used()
  return v
end

-- Set the available permits to v, making the semaphore if need be.
local function sem_put(v)
  redis.call('HSET', KEYS[1], 'n', ds_int(v), '#k', ARGV[#ARGV])
  sem_exists = true
  sem_used()
end

-- Wake the waiters that avail permits can satisfy now that released more
-- became available: on the channel of each registered need s <= avail,
-- publish "n:<k>" with k = min(released, floor(avail / s)), and only when the
-- waiter set is not empty. Waiters needing more than avail are not woken.
local function sem_wake(avail, released)
  if released <= 0 or avail <= 0 then return end
  if redis.call('EXISTS', KEYS[4]) == 0 then return end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ds_now_ms())
  for _, s in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    local need = tonumber(s)
    if need <= avail then
      local ch = ARGV[1]
      if need > 1 then ch = ch .. ':' .. s end
      if ds_notify(KEYS[3], ch, 'n:' .. ds_int(math.min(released, math.floor(avail / need))), ARGV[2]) == 0 then
        return
      end
    end
  end
end

-- The helpers from here to sem_ptell are also inlined into the common
-- cases (luagen): keep each body's only return, if any, its last line.

-- Register waiter id ('' when the caller will not wait) of the counting
-- semaphore as needing need permits, for window ms from now (server ms). A
-- need stays listed as long as its longest registered waiter.
local function sem_wait(id, need, window, now)
  if id ~= '' then
    local fend = ds_int(now + tonumber(window))
    redis.call('ZADD', KEYS[3], fend, id)
    ds_extend(KEYS[3], window)
    redis.call('ZADD', KEYS[4], 'GT', fend, need)
    ds_extend(KEYS[4], window)
  end
end

-- Forget waiter id of the permit semaphore.
local function sem_punwait(id)
  if id ~= '' and redis.call('ZREM', KEYS[3], id) == 1 then redis.call('HDEL', KEYS[4], id) end
end

-- Queue waiter id of the permit semaphore ('' when the caller will not
-- wait: nothing is written), its place kept when it registers again, with
-- the permit ids it waits for and their lease ms (a release grants them:
-- sem_pgrant) and listens, 'l' when it listens on its Client's channel
-- (it subscribed; one that spins does not, '' or nil), at the server time
-- t (a TIME reply) whose ms is now. first
-- is the earliest lease of the held permits ({id, end}, or {} when none is
-- held): the waiter is told to try again when it ends, or in half a window
-- when no permit is held, and its window ms run from then. Returns the ms
-- until that lease ends, -1 when no permit is held.
local function sem_pwait(id, ids, lease, listens, window, first, t, now)
  local retry, told = -1, math.floor(window / 2)
  if first[2] then
    retry = tonumber(first[2]) - now
    told = retry
  end
  if id ~= '' then
    local span = told + window
    redis.call('ZADD', KEYS[3], 'NX', ds_int(ds_us(t)), id)
    redis.call('HSET', KEYS[4], id, ds_int(now + span) .. ' ' .. lease .. (listens or '') .. ' ' .. ids)
    ds_extend(KEYS[3], span)
    ds_extend(KEYS[4], span)
  end
  return retry
end

-- The permit ids, granted to a waiter that asked for lease ms, are held
-- from now for that lease, at most the hand-off lease.
local function sem_phold(ids, lease, now)
  local exp = ds_int(now + math.min(tonumber(ARGV[#ARGV - 1]), tonumber(lease)))
  for pid in string.gmatch(ids, '%S+') do redis.call('ZADD', KEYS[2], exp, pid) end
end

-- Waiter id, granted its permits, leaves the queue and is told
-- 'g:<id> <server ms> <next>' on its Client's channel (ds_tell): it holds
-- when the message arrives. after and third are the two waiters after it
-- in the queue ('-': none), both nudged: <next> is '<after>,<third>' when
-- third waits in id's Client or after's, which ds_tell's messages reach;
-- else <next> is after, and third's Client is told 'w:- <third>' of its
-- own. So two granted waiters in a row that vanished (a process that died
-- with both queued) delay the third by about twice the hand-off lease, not
-- until the retry time of its last refusal.
local function sem_ptell(id, after, third, now)
  sem_punwait(id)
  local next, c = after, string.match(third, '^[^:]*')
  if third ~= '-' and (c == string.match(id, '^[^:]*') or c == string.match(after, '^[^:]*')) then
    next = after .. ',' .. third
  end
  ds_tell(ARGV[2], ARGV[1], id, next, 'g:' .. id .. ' ' .. ds_int(now) .. ' ' .. next)
  if third ~= '-' and next == after then redis.call(ARGV[2], ARGV[1] .. ':' .. c, 'w:- ' .. third) end
end

-- Forget every waiter of the permit semaphore of Client cid that listens
-- (its entry's lease ends in 'l'; one without an entry too), when cid no
-- longer listens (ds_listening): none of them can be told. With all, those
-- of every Client that no longer listens too (ds_of_deaf). A waiter that
-- spins stays.
local function sem_pforget(cid, all)
  ds_drop(KEYS[3], KEYS[4], ds_of_deaf(redis.call('ZRANGE', KEYS[3], 0, -1), cid, all, ARGV[2], ARGV[1]), function(entry)
    return string.match(entry or '', '^%d+ %d+(l?) ') ~= ''
  end)
end

-- Whether the waiter of the permit semaphore whose entry (false: none) is
-- entry is no longer registered at now ms (its registration ended, or it
-- has no entry). Also returns the entry's lease of the permits, 'l' when it
-- listens, and the permit ids it waits for.
local function sem_pended(entry, now)
  local fend, lease, l, ids = string.match(entry or '', '^(%d+) (%d+)(l?) (.+)$')
  return not fend or tonumber(fend) <= now, lease, l, ids
end

-- The permit semaphore: grant the available permits to its queued
-- waiters, oldest first, while the oldest's need fits (a waiter whose
-- window ended is dropped on the way, and one that listens whose Client
-- has no subscription on this server, ds_listening, is passed over and
-- forgotten, with every waiter of its Client that listens: its process
-- died, or it learns of the permits when it has subscribed again and
-- tries). A waiter granted holds its permits with a lease of at most the
-- hand-off lease (sem_phold) and is told (sem_ptell): its Client's renewal
-- extends the lease. The two waiters
-- after it are nudged to bound their sleep by the hand-off lease: a
-- granted waiter that vanished lets the lease end, and the next one's
-- attempt returns its permits and is granted them; when the second
-- vanished too, the third's attempt grants them to it, and the third is
-- granted them a hand-off lease later.
local function sem_pgrant()
  local v = sem_avail()
  if v <= 0 or redis.call('EXISTS', KEYS[4]) == 0 then return end
  local now, ended_before, deaf_before = ds_now_ms(), false, false
  for _ = 1, 64 do
    local three = redis.call('ZRANGE', KEYS[3], 0, 2)
    if #three == 0 then return end
    local id = three[1]
    local ended, lease, l, ids = sem_pended(redis.call('HGET', KEYS[4], id), now)
    if ended then
      sem_punwait(id)
      if ended_before then
        -- A second one: every waiter whose registration ended goes now,
        -- however many (a process that stopped with its connections open
        -- leaves waiters that seem to listen until their registrations
        -- end), not one a turn, which would stop after 64.
        ds_drop(KEYS[3], KEYS[4], redis.call('ZRANGE', KEYS[3], 0, -1), function(v) return (sem_pended(v, now)) end)
      end
      ended_before = true
    else
      local need = 0
      for _ in string.gmatch(ids, '%S+') do need = need + 1 end
      if need > v then return end
      if l == '' or ds_listening(ARGV[2], ARGV[1], string.match(id, '^[^:]*')) then
        sem_phold(ids, lease, now)
        v = v - need
        sem_add(-need)
        sem_ptell(id, three[2] or '-', three[3] or '-', now)
        if v <= 0 then return end
      else
        -- Its Client no longer listens: forgotten with its Client's other
        -- waiters that listen (from the second such Client on, with those
        -- of every Client that no longer listens), and on to the next.
        sem_pforget(string.match(id, '^[^:]*'), deaf_before)
        deaf_before = true
      end
    end
  end
  -- A bound only: from the second waiter whose registration ended, and the
  -- second Client no longer listening, on, all of each went at once, so 64
  -- turns are not reached. Past it the rest would try again by their own
  -- timers.
end

-- Hand on what avail permits, released more, can satisfy: the counting
-- semaphore wakes waiters (sem_wake), the permit semaphore grants them
-- (sem_pgrant).
local function sem_give(avail, released)
  if ARGV[#ARGV] == 'semaphore' then sem_wake(avail, released) else sem_pgrant() end
end

-- Refuse another kind (sem_kind), then return the held permits whose lease
-- ended to the pool and hand them on (sem_give). Returns the server time
-- in ms.
local function sem_prune()
  sem_kind()
  local now = ds_now_ms()
  local k = redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if k > 0 then sem_give(sem_add(k), k) end
  return now
end

