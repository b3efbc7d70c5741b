-- Helpers of the mutex's scripts, placed after the shared library and
-- grant.lua, before each script's body.
--
-- The mutex's waiters, under the lock's hash tag. A waiter is an
-- acquisition, not an owner: its id is '<owner>:<acquisition id>', so two
-- waiting acquisitions of one owner have two entries, and one giving up
-- never takes away the other's entry or wake-up.
--   Q a sorted set: waiter id -> server µs of its first
--     registration, so the oldest waiter comes first and a waiter that
--     registers again (it was woken and beaten to the lock) keeps its place
--   E a hash: waiter id -> '<end> <acquisition id> <mode> <lease ms>' and,
--     once a release woke it, ' <ms first woken>'. <mode> is the
--     acquisition's ('w' or 'e'), followed by 'l' when the waiter listens on
--     its Client's channel (a waiter that spins does not). The waiter is
--     forgotten at <end> (its process may have died), or when it was woken
--     more than a hand-off lease ago and has not come back (registering
--     again clears the mark).
-- A release grants the lock to the oldest waiter directly ('g:<id>
-- <acquisition id> <token> <server ms> <next>', mx_grant in grant.lua): it
-- holds when the message arrives. With a starvation threshold (starve > 0,
-- sync.Mutex's mode) a release whose oldest waiter is younger frees the
-- lock and wakes that one only ('w:<id> <next>'), so a running owner may
-- barge in. <next> is the waiter after it ('-' when none): that waiter's
-- process bounds its sleep by a hand-off lease, so a chosen waiter that
-- vanished delays the others by at most that; a grant leaves it out when
-- that waiter tries again by itself within the lease anyway (mx_nudge).
-- The waiter after that is nudged too (<next> is then '<id>,<id>', and
-- it gets a 'w:- <id>' of its own when its Client was told nothing:
-- mx_next_of), so that two in a row that vanished delay it by about the
-- lease too.
-- Messages go to the channel of the waiter's Client only ('<channel>:<client
-- id>', the part of a waiter id before its first ':'), so other processes do
-- not even receive them; a next waiter of another Client gets its own
-- 'w:- <next>' (ds_tell, lib.lua).
-- A waiter that listens is granted the lock only when its Client has a
-- subscription on the server (PUBSUB NUMSUB, before anything is granted or
-- published; not asked of the releaser's own Client), and marked woken
-- only when its Client received the wake-up: a Client that no longer
-- listens (its process died, so the server closed its subscription) is
-- passed over at once, and its waiter forgotten, where it would otherwise
-- hold the lock for a hand-off lease. A nudge sent already to the waiters
-- after it (mx_next_of) stays: it only makes them try early. A live Client
-- that is subscribing anew (a failover moved its subscription) finds its
-- waiter gone and registers again when it tries.

-- Mark the lock h as one whose release must look for waiters ('#q'), when
-- the waiter queue q exists: a lock without the mark was never waited for
-- while it lived, and its last release takes the short path (unlockfast.lua).
local function mx_flag(h, q)
  if redis.call('EXISTS', q) == 1 then redis.call('HSET', h, '#q', 1) end
end

-- Register waiter id, waiting for acquisition acq (mode, lease ms; mode
-- ends in 'l' when the waiter listens) of the lock h, held by another
-- owner, until its remaining lease ttl (negative: unknown, counted as half
-- a window) plus window ms, at the server time t
-- (a TIME reply) whose ms is now; h is marked as waited for ('#q'), whose
-- value qend (false: none) says until when Q and E live at least. Also
-- inlined into lockfast.lua's common case (luagen): keep its body free of
-- returns.
local function mx_wait(h, q, e, id, ttl, window, acq, mode, lease, qend, t, now)
  local span = ttl
  if span < 0 then span = math.floor(tonumber(window) / 2) end
  span = span + tonumber(window)
  -- Queued to the server's microsecond: ties by Client id would unsettle
  -- the order.
  redis.call('ZADD', q, 'NX', ds_int(ds_us(t)), id)
  redis.call('HSET', e, id, ds_int(now + span) .. ' ' .. acq .. ' ' .. mode .. ' ' .. lease)
  if now + span > (tonumber(qend) or 0) then
    local keep = span + tonumber(window)
    local r = redis.call('PTTL', e)
    if r < keep then
      redis.call('PEXPIRE', q, keep)
      redis.call('PEXPIRE', e, keep)
      r = keep
    end
    redis.call('HSET', h, '#q', ds_int(now + r))
  end
end

-- Forget waiter id. When that may empty the waiters of a lock h that lives
-- on (h nil: the caller writes the lock anew), its '#q' goes back to 1: the
-- next registration makes Q and E anew, without an expiry until it sets one.
local function mx_unwait(q, e, id, h)
  if redis.call('ZREM', q, id) == 1 then
    redis.call('HDEL', e, id)
    if h and redis.call('HEXISTS', h, '#q') == 1 then redis.call('HSET', h, '#q', 1) end
  end
end

-- Forget every waiter of Client cid that listens (its mode ends in 'l';
-- one without an entry too), when cid no longer listens (ds_listening):
-- none of them can be told. With all, those of every Client that no longer
-- listens too, but live's (ds_of_deaf).
local function mx_forget(q, e, cid, all, pub, channel, live)
  ds_drop(q, e, ds_of_deaf(redis.call('ZRANGE', q, 0, -1), cid, all, pub, channel, live and {[live] = true}), function(entry)
    local mode = string.match(entry or '', '^%S+ %S+ (%S+)')
    return not mode or #mode > 1
  end)
end

-- Whether the waiter whose entry (false: none) is entry is no longer
-- registered at now ms: its registration ended, or it was woken and has not
-- come back within the hand-off lease hl ms. Also returns the entry's
-- acquisition id, mode, lease and when it was woken ('': not woken).
local function mx_ended(entry, now, hl)
  local fend, acq, mode, lease, woken
  if entry then
    fend, acq, mode, lease, woken = string.match(entry, '^(%S+) (%S+) (%S+) (%S+) ?(%S*)$')
  end
  local ended = not fend or tonumber(fend) <= now or (woken ~= '' and tonumber(woken) + hl <= now)
  return ended, acq, mode, lease, woken
end

-- The lock h was released by its last holder (or deleted by force, starve
-- then being inf: nobody is granted it): hand it on. With nobody
-- waiting it is deleted (one ZRANGE more than a plain DEL). Otherwise the
-- oldest live waiter is chosen: when it registered at least starve ms ago
-- (by default always: starve 0) the lock is granted to it (mx_grant), else
-- the lock is deleted and that waiter alone is woken, so a running owner may
-- barge in first. window (nil: unknown) is the waiters' window, for
-- mx_nudge; live (nil: none) the id of a Client known to be alive, for
-- mx_grant. Returns 'g', 'w' or '' (nobody was told).
local function mx_next(h, q, e, fence, channel, pub, starve, hl, window, live)
  local now, ended_before, deaf_before
  hl = tonumber(hl)
  for _ = 1, 64 do
    local two = redis.call('ZRANGE', q, 0, 2, 'WITHSCORES') -- the oldest and the two after it
    if #two == 0 then break end
    now = now or ds_now_ms()
    local id, since = two[1], tonumber(two[2])
    local after, third = two[3] or '-', two[5] or '-'
    local es = redis.call('HMGET', e, id, after, third)
    local entry = es[1]
    local ended, acq, mode, lease, woken = mx_ended(entry, now, hl)
    if ended then
      redis.call('ZREM', q, id)
      redis.call('HDEL', e, id)
      if ended_before then
        -- A second one: every waiter whose registration ended goes now,
        -- however many (a process that stopped with its connections open
        -- leaves waiters that seem to listen until their registrations
        -- end), not one a turn, which would stop after 64.
        ds_drop(q, e, redis.call('ZRANGE', q, 0, -1), function(v) return (mx_ended(v, now, hl)) end)
      end
      ended_before = true
    elseif ds_us(ds_clock()) - since >= tonumber(starve) * 1000 then
      redis.call('DEL', h)
      redis.call('ZREM', q, id)
      redis.call('HDEL', e, id)
      if mx_grant(h, fence, channel, pub, hl, ds_clock(), now, id, acq, mode, lease, after,
          mx_next_of(pub, channel, id, after, es[2], third, es[3], now, hl, window), 1, live) then
        return 'g'
      end
      -- Its Client no longer listens: its other waiters are forgotten too
      -- (from the second such Client on, those of every Client that no
      -- longer listens), and on to the next waiter.
      mx_forget(q, e, string.match(id, '^[^:]*'), deaf_before, pub, channel, live)
      deaf_before = true
    else
      redis.call('DEL', h)
      -- Woken already and not back yet: it is on its way (as sync.Mutex
      -- wakes no second waiter while one is awake).
      if woken ~= '' then return '' end
      local next = mx_next_of(pub, channel, id, after, es[2], third, es[3], now, hl, window)
      if ds_tell(pub, channel, id, next, 'w:' .. id .. ' ' .. next, #mode > 1) then
        redis.call('HSET', e, id, entry .. ' ' .. ds_int(now))
        return 'w'
      end
      -- Its Client no longer listens: forgotten with its Client's other
      -- waiters (and from the second such Client on, with those of every
      -- Client that no longer listens), and on to the next waiter.
      mx_forget(q, e, string.match(id, '^[^:]*'), deaf_before, pub, channel, live)
      deaf_before = true
    end
  end
  -- A bound only: from the second waiter whose registration ended, and the
  -- second Client no longer listening, on, all of each went at once, so
  -- 64 turns are not reached. Past it the rest would wake by their own
  -- timers.
  redis.call('DEL', h)
  return ''
end
