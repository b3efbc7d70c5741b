-- Helpers of the mutex's scripts, placed after the shared library and
-- before each script's body.
--
-- The mutex's waiters, under the lock's hash tag. A waiter is an
-- acquisition, not an owner: its id is '<owner>:<acquisition id>', so two
-- waiting acquisitions of one owner have two entries, and one giving up
-- never takes away the other's entry or wake-up.
--   Q a sorted set: waiter id -> server ms of its first
--     registration, so the oldest waiter comes first and a waiter that
--     registers again (it was woken and beaten to the lock) keeps its place
--   E a hash: waiter id -> '<end> <acquisition id> <mode> <lease ms>' and,
--     once a release woke it, ' <ms first woken>'. The waiter is forgotten
--     at <end> (its process may have died), or when it was woken more than a
--     hand-off lease ago and has not come back (registering again clears
--     the mark).
-- A release wakes one waiter across all processes, the oldest, with
-- 'w:<id> <next>'; once the oldest has waited too long it grants the lock
-- to it directly ('g:<id> <acquisition id> <token> <server ms> <next>').
-- <next> is the waiter after it ('-' when none): that waiter's process
-- bounds its sleep by a hand-off lease, so a chosen waiter that vanished
-- delays the others by at most that. Messages go to the channel of the
-- waiter's Client only ('<channel>:<client id>', the part of a waiter id
-- before its first ':'), so other processes do not even receive them; a
-- next waiter of another Client gets its own 'w:- <next>'.

-- The owner of waiter id, which waits for acquisition acq.
local function mx_owner(id, acq)
  if string.sub(id, -#acq - 1) == ':' .. acq then return string.sub(id, 1, -#acq - 2) end
  return id
end

-- Publish msg to the Client of waiter id.
local function mx_tell(pub, channel, id, msg)
  redis.call(pub, channel .. ':' .. string.match(id, '^[^:]*'), msg)
end

-- Tell waiter id (msg) and nudge next, with one message when both wait in
-- the same Client.
local function mx_tell_both(pub, channel, id, next, msg)
  mx_tell(pub, channel, id, msg)
  if next ~= '-' and string.match(next, '^[^:]*') ~= string.match(id, '^[^:]*') then
    mx_tell(pub, channel, next, 'w:- ' .. next)
  end
end

-- Mark the lock h as one whose release must look for waiters ('#q'), when
-- the waiter queue q exists: a lock without the mark was never waited for
-- while it lived, and its last release takes the short path (unlockfast.lua).
local function mx_flag(h, q)
  if redis.call('EXISTS', q) == 1 then redis.call('HSET', h, '#q', 1) end
end

-- Register waiter id, waiting for acquisition acq (mode, lease ms) of the
-- lock h, held by another owner, until its remaining lease ttl (may be
-- negative: unknown) plus window ms; h is marked as waited for ('#q') unless
-- flagged says it is.
local function mx_wait(h, q, e, id, ttl, window, acq, mode, lease, flagged)
  local now = ds_now_ms()
  if ttl < 0 then ttl = 0 end
  local span = ttl + tonumber(window)
  if not flagged then redis.call('HSET', h, '#q', 1) end
  redis.call('ZADD', q, 'NX', now, id)
  redis.call('HSET', e, id, ds_int(now + span) .. ' ' .. acq .. ' ' .. mode .. ' ' .. lease)
  ds_extend(q, span)
  ds_extend(e, span)
end

-- Forget waiter id.
local function mx_unwait(q, e, id)
  if redis.call('ZREM', q, id) == 1 then redis.call('HDEL', e, id) end
end

-- The lock h was released by its last holder (or deleted by force, starve
-- then being inf: nobody is granted it): hand it on. With nobody
-- waiting it is deleted (one ZRANGE more than a plain DEL). Otherwise the
-- oldest live waiter is chosen: when it registered at least starve ms ago
-- the lock is granted to it (a new hold with a fresh fencing token, its
-- acquisition in the ledger, a lease of at most hl ms until it renews, and
-- the waiters flag when others wait), else
-- the lock is deleted and that waiter alone is woken, so a running owner may
-- barge in first. Returns 'g', 'w' or '' (nobody was told).
local function mx_next(h, q, e, fence, fencettl, channel, pub, starve, hl) -- fencettl: unused
  local now
  hl = tonumber(hl)
  for _ = 1, 64 do
    local two = redis.call('ZRANGE', q, 0, 1, 'WITHSCORES')
    if #two == 0 then break end
    now = now or ds_now_ms()
    local id, since = two[1], tonumber(two[2])
    local after = two[3] or '-'
    local entry = redis.call('HGET', e, id)
    local fend, acq, mode, lease, woken
    if entry then
      fend, acq, mode, lease, woken = string.match(entry, '^(%S+) (%S+) (%S+) (%S+) ?(%S*)$')
    end
    if not fend or tonumber(fend) <= now or (woken ~= '' and tonumber(woken) + hl <= now) then
      redis.call('ZREM', q, id)
      redis.call('HDEL', e, id)
    elseif now - since >= tonumber(starve) then
      local tok, s = ds_token(fence, ds_clock())
      local ttl = hl
      if mode ~= 'w' then ttl = math.min(ttl, tonumber(lease)) end
      redis.call('DEL', h)
      local owner = mx_owner(id, acq)
      local grant = acq .. '=' .. ds_end(now, mode, lease)
      if after ~= '-' then -- others wait: the new hold's release looks for them
        redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, grant, '#q', 1)
      else
        redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, grant)
      end
      redis.call('PEXPIRE', h, ds_int(ttl))
      redis.call('ZREM', q, id)
      redis.call('HDEL', e, id)
      mx_tell_both(pub, channel, id, after, 'g:' .. id .. ' ' .. acq .. ' ' .. s .. ' ' .. ds_int(now) .. ' ' .. after)
      return 'g'
    else
      redis.call('DEL', h)
      -- Woken already and not back yet: it is on its way (as sync.Mutex
      -- wakes no second waiter while one is awake).
      if woken ~= '' then return '' end
      redis.call('HSET', e, id, entry .. ' ' .. ds_int(now))
      mx_tell_both(pub, channel, id, after, 'w:' .. id .. ' ' .. after)
      return 'w'
    end
  end
  -- Nobody live among the oldest 64: the rest wake by their own timers.
  redis.call('DEL', h)
  return ''
end
