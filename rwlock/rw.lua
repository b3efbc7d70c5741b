-- Helpers of the read-write lock's scripts, placed after the shared library
-- and before each script's body.
--
-- A read-write lock is two keys under its name's hash tag:
--   H a hash: '#w' -> the owner holding the write lock; for each hold m,
--     'w:<owner>' (the write hold) or 'r:<owner>' (a read hold):
--     m -> hold count, 't:'..m -> fencing token, '#a:'..m -> the hold's
--     ledger of acquisitions (lib.lua)
--   L a sorted set: hold m -> the end of its lease, ms on the server clock:
--     the longest promise made to a live acquisition of m
-- Waiters: the readers' and the writers' waiter sets (ds_wait: waiter id ->
-- the end of its registration), and the writers' queue Q, a sorted set of
-- the same writers by the server µs of their first registration, so that a
-- release grants the lock to the oldest (rw_first_writer).
-- Each hold has its own lease, so a crashed reader's hold ends alone. Every
-- script first drops the holds whose lease ended (rw_prune); both keys live
-- until the last lease ends and are deleted when no hold is left.

-- Forget hold m in H (not in L).
local function rw_drop(h, m)
  redis.call('HDEL', h, m, 't:' .. m, '#a:' .. m)
  if string.sub(m, 1, 2) == 'w:' then redis.call('HDEL', h, '#w') end
end

-- Drop the holds whose lease ended. Returns the server time (ms) and how
-- many holds are left.
local function rw_prune(h, l)
  ds_kind(h, 'rwlock')
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', l, '-inf', ds_int(now))
  if #gone > 0 then
    for _, m in ipairs(gone) do rw_drop(h, m) end
    redis.call('ZREMRANGEBYSCORE', l, '-inf', ds_int(now))
  end
  local live = redis.call('ZCARD', l)
  if live == 0 then redis.call('DEL', h) end
  return now, live
end

-- Ms until the last lease ends (0 when no hold is left).
local function rw_last(l, now)
  local last = redis.call('ZRANGE', l, -1, -1, 'WITHSCORES')
  if #last == 0 then return 0 end
  return tonumber(last[2]) - now
end

-- Keep both keys until the last lease ends; delete them when no hold is left.
local function rw_expire(h, l, now)
  local ttl = rw_last(l, now)
  if ttl <= 0 then
    redis.call('DEL', h, l)
    return
  end
  redis.call('PEXPIRE', h, ds_int(ttl))
  redis.call('PEXPIRE', l, ds_int(ttl))
end

-- Grant acquisition id (mode 'w' or 'e') of hold m with a lease of lease
-- ms from now (a new hold gets a fencing token); a repeated attempt of an
-- acquisition granted before renews its lease from now, as a new grant's
-- would be, so the caller may count it from that attempt's send. The
-- hold's lease is never shortened. Returns {token, hold count}.
local function rw_grant(h, l, m, now, lease, fence, id, mode)
  local n, new = ds_enter(h, m, id, mode, lease, now, true)
  local tok
  if n == 1 and new then
    local s
    tok, s = ds_token(fence, ds_clock())
    redis.call('HSET', h, 't:' .. m, s, '#k', 'rwlock')
  else
    tok = tonumber(redis.call('HGET', h, 't:' .. m))
  end
  local e = now + tonumber(lease)
  local cur = redis.call('ZSCORE', l, m)
  if not cur or tonumber(cur) < e then
    redis.call('ZADD', l, ds_int(e), m)
    rw_expire(h, l, now)
  end
  return {tok, n}
end

-- Release acquisition id of hold m, d its finished mark (see ds_release
-- and ds_release_mark for the reply). When the
-- hold ends it is dropped; when it goes on with no acquisition the watchdog
-- renews, its lease falls to the latest explicit end left.
local function rw_release(h, l, d, m, id, now, life)
  local r, watch, last = ds_release_mark(h, d, m, id, life, nil, '1')
  if r == 1 then
    rw_drop(h, m)
    redis.call('ZREM', l, m)
    rw_expire(h, l, now)
  elseif r == 0 and not watch then
    redis.call('ZADD', l, ds_int(last), m)
    rw_expire(h, l, now)
  end
  return r
end

-- Grant waiter id of the waiter set wset (and of the writers' queue q, if
-- given) ('<owner>:<acquisition id>:<mode><lease ms>[l]',
-- acquire.Lock.ModeInWaiter and SaysListens) a hold of the side ('r' or
-- 'w'), as its own attempt would (rw_grant: a fresh fencing token for a new
-- hold), with a lease of at most the hand-off lease hl ms until its Client
-- confirms it, and tell its Client (ds_tell): 'g:<id> <acquisition id>
-- <token> <now> <next>' (internal/notify). next ('-' for none; '<a>,<b>'
-- names two: rw_next) is nudged, by a message of its own ('w:- <next>')
-- when it waits in another Client: it bounds its sleep by hl in case id has
-- vanished, whose hold then lapses within hl.
local function rw_hand(h, l, fence, wset, id, side, now, hl, channel, pub, next, q)
  redis.call('ZREM', wset, id)
  if q then redis.call('ZREM', q, id) end
  local owner, acq, mode, lease = string.match(id, '^(.*):([^:]+):([we])(%d+)l?$')
  if not owner then return end
  if side == 'w' then redis.call('HSET', h, '#w', owner) end
  local r = rw_grant(h, l, side .. ':' .. owner, now, math.min(hl, tonumber(lease)), fence, acq, mode)
  ds_tell(pub, channel, id, next, 'g:' .. id .. ' ' .. acq .. ' ' .. ds_int(r[1]) .. ' ' .. ds_int(now) .. ' ' .. next)
end

-- Forget every writer of Client cid that listens (its id ends in 'l')
-- from the writers' waiter set wwait and queue q, when cid no longer
-- listens (rw_gone): none of them can be told. With all, those of every
-- Client that no longer listens too, but those asked says listen
-- (ds_of_deaf). A writer that does not say it listens stays.
local function rw_forget(wwait, q, cid, all, pub, channel, asked)
  local gone = {}
  for _, id in ipairs(ds_of_deaf(redis.call('ZRANGE', wwait, 0, -1), cid, all, pub, channel, asked)) do
    if string.sub(id, -1) == 'l' then gone[#gone + 1] = id end
  end
  ds_calls('ZREM', wwait, gone)
  ds_calls('ZREM', q, gone)
end

-- Whether waiter id ('...l' when it listens on its Client's channel: its
-- Client subscribed; one that spins does not) is gone: it listens, and
-- its Client has no subscription on this server (ds_listening: its process
-- died, or it subscribes anew and tries when it has). A waiter gone is
-- forgotten from the waiter set w; a writer (the writers' queue q given)
-- with every other writer of its Client that listens (rw_forget; from the
-- second Client found gone on, of every Client that no longer listens), as
-- the writers are looked at one a turn and the readers all in one.
-- asked.by caches the answers by Client id (a Client known to be alive
-- listens), and asked.gone says that a Client was found gone before.
local function rw_gone(w, q, id, channel, pub, asked)
  if string.sub(id, -1) ~= 'l' then return false end
  local cid = string.match(id, '^[^:]*')
  if asked.by[cid] == nil then asked.by[cid] = ds_listening(pub, channel, cid) end
  if asked.by[cid] then return false end
  redis.call('ZREM', w, id)
  if q then
    redis.call('ZREM', q, id)
    rw_forget(w, q, cid, asked.gone, pub, channel, asked.by)
  end
  asked.gone = true
  return true
end

-- The live members of waiter set w (dropping those whose window ended).
local function rw_waiting(w, now)
  if redis.call('EXISTS', w) == 0 then return {} end
  redis.call('ZREMRANGEBYSCORE', w, '-inf', ds_int(now))
  return redis.call('ZRANGE', w, 0, -1)
end

-- Queue writer id of the writers' waiter set wwait in the writers' queue q
-- (rw.lua's Q), keeping its first place, for as long as wwait lives.
local function rw_queue(q, wwait, id)
  if id == '' then return end
  redis.call('ZADD', q, 'NX', ds_int(ds_us(ds_clock())), id)
  redis.call('PEXPIRE', q, redis.call('PTTL', wwait))
end

-- The oldest writer of the queue q whose registration in wwait lives, and
-- the two after it ('-' for none); nil when none lives. A writer found
-- gone on the way leaves the queue, and when a second is found, every
-- writer whose registration ended does.
local function rw_first_writer(q, wwait, now)
  for _ = 1, 2 do
    local three = redis.call('ZRANGE', q, 0, 2)
    if #three == 0 then return nil end
    local e = redis.call('ZSCORE', wwait, three[1])
    if e and tonumber(e) > now then return three[1], three[2] or '-', three[3] or '-' end
    redis.call('ZREM', q, three[1])
  end
  -- A second one: every writer whose registration ended leaves now,
  -- however many (a process that stopped with its connections open leaves
  -- writers that seem to listen until their registrations end). The queue
  -- keeps those of wwait, in their order, and its expiry.
  redis.call('ZREMRANGEBYSCORE', wwait, '-inf', ds_int(now))
  if redis.call('ZINTERSTORE', q, 2, q, wwait, 'WEIGHTS', 1, 0) == 0 then return nil end
  local ttl = redis.call('PTTL', wwait)
  if ttl > 0 then redis.call('PEXPIRE', q, ttl) end
  local three = redis.call('ZRANGE', q, 0, 2)
  return three[1], three[2] or '-', three[3] or '-'
end

-- Writer id of the writers' waiter set wwait was nudged (rw_hand, or a
-- 'w:- <id>' message): it bounds its sleep by hl, so it tries again within
-- hl, and its registration is cut to that and a hand-off lease more for the
-- attempt to arrive (never lengthened). One that vanished is dropped then,
-- holding nobody back any longer.
local function rw_cut(wwait, id, now, hl)
  redis.call('ZADD', wwait, 'XX', 'LT', ds_int(now + 2 * hl), id)
end

-- The writers a and b of the writers' waiter set wwait ('-' for none),
-- first in line after the waiter a release hands the lock to, as the
-- notifier's <next>: '<a>,<b>', '<a>' or '-'. Both are nudged by the
-- message to that waiter (ds_tell: on its Client's channel, and on each of
-- theirs), and their registrations cut (rw_cut). So a writer that vanished
-- after it delays the one after it by about hl, not the retry time of its
-- last refusal.
local function rw_next(a, b, wwait, now, hl)
  if a == '-' then return '-' end
  rw_cut(wwait, a, now, hl)
  if b == '-' then return a end
  rw_cut(wwait, b, now, hl)
  return a .. ',' .. b
end

-- Nudge every waiting reader: 'w:- *' (internal/notify) once on the channel
-- of each Client with a reader in waiter set w, so that it bounds its sleep
-- by the hand-off lease in case the writer granted ahead of it vanished.
local function rw_nudge_readers(w, now, channel, pub)
  local told = {}
  for _, id in ipairs(rw_waiting(w, now)) do
    local cid = string.match(id, '^[^:]*')
    if not told[cid] then
      told[cid] = true
      redis.call(pub, channel .. ':' .. cid, 'w:- *')
    end
  end
end

-- A release may have freed the lock (or its read side): hand it on directly,
-- with no attempt of the waiters' own. While no writer holds, the waiting
-- readers are granted all at once, unless writers go first (prefer '1') and
-- one waits; when no hold is left and no reader is granted, the oldest
-- waiting writer is (rw_first_writer). Waiters about to be granted whose
-- Client no longer listens are passed over and forgotten (rw_gone): the
-- next ones are granted in their place. The two writers first in line after
-- the grant are nudged and their registrations cut (rw_next), and, when a
-- writer is granted, the readers it goes ahead of (writer preference) are
-- nudged too; when holds are left that all end within hl, the two writers
-- first in line are nudged. So a grantee that vanished without the server
-- knowing delays them by at most the hand-off lease hl ms, and a nudged
-- writer that vanished too by about hl more. live (nil: none) is the id of
-- a Client known to be alive, the releaser's own, whose waiters need no
-- asking.
local function rw_hand_on(h, l, fence, rwait, wwait, q, channel, pub, now, hl, prefer, live)
  if redis.call('HEXISTS', h, '#w') == 1 then return end
  hl = tonumber(hl)
  local asked = {by = {}}
  if live then asked.by[live] = true end
  for _ = 1, 64 do
    local first, second, third = rw_first_writer(q, wwait, now)
    local readers = {}
    if prefer ~= '1' or not first then
      for _, id in ipairs(rw_waiting(rwait, now)) do
        if not rw_gone(rwait, nil, id, channel, pub, asked) then readers[#readers + 1] = id end
      end
    end
    if #readers > 0 then
      local next = rw_next(first or '-', second or '-', wwait, now, hl)
      for _, id in ipairs(readers) do
        rw_hand(h, l, fence, rwait, id, 'r', now, hl, channel, pub, next)
        next = '-'
      end
      return
    elseif first and redis.call('EXISTS', l) == 0 then
      if not rw_gone(wwait, q, first, channel, pub, asked) then
        rw_hand(h, l, fence, wwait, first, 'w', now, hl, channel, pub, rw_next(second, third, wwait, now, hl), q)
        -- Nudged even when a writer waits after the grantee: that one may
        -- have vanished too, and then only the readers come back.
        if prefer == '1' then rw_nudge_readers(rwait, now, channel, pub) end
        return
      end
      -- first was passed over, with its Client's other writers: look again
    elseif first and rw_last(l, now) <= hl then
      -- The holds left end within the hand-off lease: grants not confirmed
      -- yet, whose grantees may have vanished. The two writers first in
      -- line, whose refusals may have named a later end, are nudged and
      -- their registrations cut (the first may have vanished too); one
      -- message names both when one Client waits with both.
      rw_cut(wwait, first, now, hl)
      local msg = 'w:- ' .. first
      if second ~= '-' then
        rw_cut(wwait, second, now, hl)
        if string.match(second, '^[^:]*') == string.match(first, '^[^:]*') then msg = msg .. ',' .. second end
      end
      ds_tell(pub, channel, first, second, msg)
      return
    else
      return
    end
  end
  -- A bound only: from the second Client no longer listening on, the
  -- writers of all went at once, so 64 turns are not reached. Past it the
  -- rest would wake by their own timers.
end
