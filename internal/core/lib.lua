-- distsync's shared Lua helpers. Every script is this library followed by the
-- script's own body, so the helpers live in one place. Time is always the
-- server's (TIME); nothing here trusts a client clock.
--
-- ds_int, ds_ms, ds_us, ds_token, ds_extend, ds_done and ds_tell are also
-- inlined into the common cases that run before this library is defined
-- (X.in.lua -> X.lua, by go generate ./internal/core; luagen/inline.go):
-- keep them as they are written here, a one-line return, or a body whose
-- only return, if any, is its last line.

-- x, a whole number (as large as a fencing token), as a string of digits.
local function ds_int(x)
  return string.format('%d', x)
end

-- Server time in milliseconds of t, a TIME reply.
local function ds_ms(t)
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Server time in microseconds of t, a TIME reply.
local function ds_us(t)
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The server's TIME, read at most once per script run (TIME costs a call;
-- a script runs atomically, so one reading serves it all).
local ds_t
local function ds_clock()
  if not ds_t then ds_t = redis.call('TIME') end
  return ds_t
end

-- Server time in milliseconds.
local function ds_now_ms()
  return ds_ms(ds_clock())
end

-- Next fencing token from the counter key (Core.FenceKey: one shared by
-- many names), with t a TIME reply: as a number and as the string to store.
-- It is the server clock in microseconds, or the counter's last token + 1
-- when that is not smaller. The counter never lapses, so tokens strictly
-- increase for ever; when it is absent (a restart without persistence) the
-- sequence continues from the clock, so tokens still increase unless the
-- clock stepped back. One SET ... GET in the common case (the clock moved on
-- since the last token). The clock's digits are joined and compared as
-- strings (of no leading zero: the longer is the larger): tonumber and
-- string.format cost the server a strtod or a printf each.
local function ds_token(key, t)
  local s = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
  local last = redis.call('SET', key, s, 'GET')
  if last and (#last > #s or #last == #s and last >= s) then
    s = ds_int(tonumber(last) + 1)
    redis.call('SET', key, s)
  end
  return tonumber(s), s
end

-- Register a waiter (id ~= '') in the waiter set until now + ttl + window ms,
-- so releases know someone may be waiting. ttl is the remaining lease the
-- waiter was told (may be negative: unknown).
local function ds_wait(key, id, ttl, window)
  if id == '' then return end
  if ttl < 0 then ttl = 0 end
  local span = ttl + tonumber(window)
  redis.call('ZADD', key, ds_now_ms() + span, id)
  if redis.call('PTTL', key) < span then redis.call('PEXPIRE', key, span) end
end

-- Forget a waiter that got what it waited for.
local function ds_unwait(key, id)
  if id ~= '' then redis.call('ZREM', key, id) end
end

-- Publish msg on channel when a waiter may be waiting: the waiter set, pruned
-- of waiters whose window ended, is not empty. Returns 1 when published.
local function ds_notify(key, channel, msg, pub)
  if redis.call('EXISTS', key) == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ds_now_ms())
  if redis.call('ZCARD', key) == 0 then return 0 end
  redis.call(pub, channel, msg)
  return 1
end

-- The lease ms and the ledger end of a lock a release hands to a waiter
-- (mode 'w' or 'e', lease ms; now the server ms): at most the hand-off lease
-- hl until the waiter's renewal or confirmation extends it, and 'w' (the
-- watchdog renews it) or now + lease.
local function ds_handed(hl, mode, lease, now)
  local ttl, e = tonumber(hl), 'w'
  if mode ~= 'w' then
    ttl = math.min(ttl, tonumber(lease))
    e = ds_int(now + tonumber(lease))
  end
  return ttl, e
end

-- Whether the Client cid may still listen on its channel, channel .. ':'
-- .. cid, of the publish command pub: false only when this server counts
-- no subscriber to it (PUBSUB NUMSUB, SHARDNUMSUB for SPUBLISH), which a
-- waiter that said it listens has while its process is dead or its Client
-- subscribes anew. A user the ACL refuses PUBSUB gets true (pcall: an error
-- reply has no [2]). Asked before a grant by message is made, never after
-- it is published: a replica delivers what its master publishes to its own
-- subscribers, whom the master does not count, and a waiter told of a grant
-- holds (mx_grant, sem_pgrant).
local function ds_listening(pub, channel, cid)
  return redis.pcall('PUBSUB', pub == 'SPUBLISH' and 'SHARDNUMSUB' or 'NUMSUB', channel .. ':' .. cid)[2] ~= 0
end

-- The Clients of the waiters ids (a list) that no longer listen, as
-- ds_listening tells one: a set of Client id -> true. known (nil: none)
-- holds the Clients not to ask: Client id -> whether it listens, for those
-- asked already or known to be alive (a releaser's own). One PUBSUB NUMSUB
-- (SHARDNUMSUB for SPUBLISH) asks about 512 Clients at a time; a user the
-- ACL refuses PUBSUB gets an empty set. For a release that met a second
-- Client no longer listening: when many processes died at once, every one
-- of their waiters goes in that release, not one Client a turn, which
-- would stop after 64.
local function ds_deaf(pub, channel, ids, known)
  local seen, chans, deaf = {}, {}, {}
  for cid, listens in pairs(known or {}) do
    seen[cid] = true
    if not listens then deaf[cid] = true end
  end
  for _, id in ipairs(ids) do
    local cid = string.match(id, '^[^:]*')
    if not seen[cid] then
      seen[cid] = true
      chans[#chans + 1] = channel .. ':' .. cid
    end
  end
  local sub, n = pub == 'SPUBLISH' and 'SHARDNUMSUB' or 'NUMSUB', #channel + 2
  for i = 1, #chans, 512 do
    local r = redis.pcall('PUBSUB', sub, unpack(chans, i, math.min(i + 511, #chans)))
    if type(r) == 'table' and not r.err then
      for j = 1, #r, 2 do
        if r[j + 1] == 0 then deaf[string.sub(r[j], n)] = true end
      end
    end
  end
  return deaf
end

-- The ids among ids (a list of waiter ids, each beginning with its
-- Client's id and ':') that a release forgets once it found Client cid no
-- longer listening (ds_listening): cid's, and with all (it met another
-- such Client before), those of every Client that no longer listens
-- (ds_deaf, on channel of the publish command pub; known as there). So a
-- release passes over the waiters of a process that died all at once, and
-- from the second dead Client those of every dead process, not one Client
-- a turn, which would stop after 64. The caller keeps those that do not
-- listen (they spin): no subscription says anything of them.
local function ds_of_deaf(ids, cid, all, pub, channel, known)
  local cids, out = {}, {}
  if all then cids = ds_deaf(pub, channel, ids, known) end
  cids[cid] = true
  for _, id in ipairs(ids) do
    if cids[string.match(id, '^[^:]*')] then out[#out + 1] = id end
  end
  return out
end

-- redis.call(cmd, key, <id>...) for every id of ids (a list), 512 at a
-- time (unpack's bound on the Lua stack); no call when ids is empty.
local function ds_calls(cmd, key, ids)
  for i = 1, #ids, 512 do
    redis.call(cmd, key, unpack(ids, i, math.min(i + 511, #ids)))
  end
end

-- Forget the waiters among ids (a list, of the queue q, a sorted set) whose
-- entry in the hash e (false when it has none) gone says to: they leave q
-- and e. The entries are read 512 at a time. For a release that passes
-- over many waiters at once: those of a Client that no longer listens, or
-- every one whose registration ended.
local function ds_drop(q, e, ids, gone)
  local out = {}
  for i = 1, #ids, 512 do
    local part = {unpack(ids, i, math.min(i + 511, #ids))}
    local es = redis.call('HMGET', e, unpack(part))
    for j, id in ipairs(part) do
      if gone(es[j]) then out[#out + 1] = id end
    end
  end
  ds_calls('ZREM', q, out)
  ds_calls('HDEL', e, out)
end

-- Tell waiter id msg on its Client's channel, channel .. ':' .. <client id>
-- (the part of a waiter id before its first ':'), so that other Clients do
-- not even receive it. next ('-': none) is the waiter after it, or the two
-- after it joined by ',', which msg names: each Client of theirs but id's is
-- nudged with a message of its own, 'w:- <next>', after msg (a notifier
-- nudges the waiters it has of those next names). With listens set (the waiter
-- said it listens on the channel), a msg that nobody received tells nobody
-- else and returns false: the waiter's Client no longer listens (its
-- process died, or it is subscribing anew), so it will not learn of msg.
-- Otherwise returns true. Only a msg that may reach a waiter the server
-- did not count (a replica's subscriber) can be sent this way: a wake-up,
-- never a grant (mx_grant).
local function ds_tell(pub, channel, id, next, msg, listens)
  local cid = string.match(id, '^[^:]*')
  local told = redis.call(pub, channel .. ':' .. cid, msg) > 0 or not listens
  if told and next ~= '-' then
    local last = cid -- the Client told last
    for w in string.gmatch(next, '[^,]+') do
      local c = string.match(w, '^[^:]*')
      if c ~= cid and c ~= last then redis.call(pub, channel .. ':' .. c, 'w:- ' .. next) end
      last = c
    end
  end
  return told
end

-- Acquisitions. Every grant of a lock-like hold is an acquisition with an id
-- the client chose, recorded in its hold's ledger: the field '#a:'..m of the
-- hold's hash (m names the holder), a string of entries '<id>=<end>' joined
-- by spaces, where end is the server ms at which an explicit lease ends, or
-- 'w' for an acquisition the watchdog renews. The field m keeps the hold
-- count: the number of live entries. An explicit entry whose end has passed
-- is dropped whenever the ledger is read.

-- The live entries of m's ledger in hash h, as two lists. The server time
-- is read only when an explicit entry needs it (now may be nil). pre, when
-- not nil, is the ledger the caller read already (false: none).
local function ds_ledger(h, m, now, pre)
  local ids, ends = {}, {}
  local s = pre
  if s == nil then s = redis.call('HGET', h, '#a:' .. m) end
  if s then
    for id, e in string.gmatch(s, '(%S+)=(%S+)') do
      if e ~= 'w' and not now then now = ds_now_ms() end
      if e == 'w' or tonumber(e) > now then
        ids[#ids + 1] = id
        ends[#ends + 1] = e
      end
    end
  end
  return ids, ends
end

-- Store m's ledger (and its count); forget m when it is empty.
local function ds_ledger_put(h, m, ids, ends)
  if #ids == 0 then
    redis.call('HDEL', h, m, '#a:' .. m)
    return
  end
  local parts = {}
  for i = 1, #ids do parts[i] = ids[i] .. '=' .. ends[i] end
  redis.call('HSET', h, m, #ids, '#a:' .. m, table.concat(parts, ' '))
end

-- What a ledger promises: whether the watchdog renews it, and the latest
-- explicit end (0 when none).
local function ds_promise(ends)
  local watch, last = false, 0
  for _, e in ipairs(ends) do
    if e == 'w' then watch = true else last = math.max(last, tonumber(e)) end
  end
  return watch, last
end

-- The end entry of a new acquisition: 'w' when the watchdog renews it
-- (mode 'w'), else now + lease ms (now may be nil: read when needed).
local function ds_end(now, mode, lease)
  if mode == 'w' then return 'w' end
  return ds_int((now or ds_now_ms()) + tonumber(lease))
end

-- Add acquisition id (mode 'w' or 'e', lease ms) to m's ledger, unless it is
-- there already (a repeated attempt whose first reply was lost). Returns the
-- hold count and whether the acquisition was new. With restamp, a repeated
-- attempt of an explicit lease moves its end to now + lease when that is
-- later (the attempt's caller counts its lease from the repeated send).
local function ds_enter(h, m, id, mode, lease, now, restamp)
  local ids, ends = ds_ledger(h, m, now)
  for i, x in ipairs(ids) do
    if x == id then
      if restamp and ends[i] ~= 'w' then
        local e = ds_end(now, mode, lease)
        if tonumber(e) > tonumber(ends[i]) then
          ends[i] = e
          ds_ledger_put(h, m, ids, ends)
        end
      end
      return #ids, false
    end
  end
  ids[#ids + 1] = id
  ends[#ends + 1] = ds_end(now, mode, lease)
  ds_ledger_put(h, m, ids, ends)
  return #ids, true
end

-- Remove acquisition id from m's ledger. Returns -1 when it is not there,
-- else the hold count left and what the rest of the ledger promises
-- (see ds_promise). When it was m's last acquisition the ledger is left as
-- it is: the caller drops m's hold (its fields, or the whole hash). pre as
-- for ds_ledger.
local function ds_leave(h, m, id, now, pre)
  local ids, ends = ds_ledger(h, m, now, pre)
  for i, x in ipairs(ids) do
    if x == id then
      table.remove(ids, i)
      table.remove(ends, i)
      if #ids > 0 then ds_ledger_put(h, m, ids, ends) end
      local watch, last = ds_promise(ends)
      return #ids, watch, last
    end
  end
  ds_ledger_put(h, m, ids, ends)
  return -1, false, 0
end

-- Set key's expiry to at least ms from now: never shorten a lease another
-- acquisition was promised.
local function ds_extend(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end

-- The finished acquisitions of a primitive: a sorted set d of ids, each
-- scored with the server ms until which it is remembered. A release records
-- its acquisition there, so that a retried release whose first reply was
-- lost is recognised; a release of an acquisition that was never granted
-- records it too, so that an attempt still on the wire is refused when it
-- arrives. d expires with its last entry.
local function ds_done(d, id, now, life)
  redis.call('ZREMRANGEBYSCORE', d, '-inf', now)
  redis.call('ZADD', d, now + tonumber(life), id)
  ds_extend(d, life)
end

-- Whether id is a finished acquisition: released (id in d), or found not
-- held by a release ('-'..id, ds_release).
local function ds_finished(d, id)
  return redis.call('ZSCORE', d, id) ~= false or redis.call('ZSCORE', d, '-' .. id) ~= false
end

-- Release acquisition id of holder m in hash h, finished acquisitions in d
-- remembered for life ms. Returns, like every lock-like release script:
-- 1 released and m holds nothing more, 0 released and m still holds, 2 it
-- was released before (a retried release), -1 m does not hold it (its lease
-- ended, or it was never granted: then no attempt can grant it any more);
-- then whether the rest of m's ledger is renewed and its latest explicit end.
local function ds_release(h, d, m, id, now, life)
  local n, watch, last = ds_leave(h, m, id, now)
  if n < 0 then
    -- Released before by a release of its own (2), or found not held
    -- before: a retry answers as the first attempt did, and the mark
    -- ('-'..id) still refuses a late attempt (ds_finished).
    if redis.call('ZSCORE', d, id) then return 2, false, 0 end
    ds_done(d, '-' .. id, now, life)
    return -1, false, 0
  end
  ds_done(d, id, now, life)
  if n == 0 then return 1, false, 0 end
  return 0, watch, last
end

-- The mark of a finished acquisition as a key of its own, dk (the
-- primitive's ':done:'..id, under its hash tag), living life ms: the
-- cheapest record (one SET to write; an attempt checks it with the same
-- EXISTS that checks the lock). Same meaning as ds_done; its value says
-- whose release it was (ds_release_mark).
local function ds_mark(dk, life, by)
  redis.call('SET', dk, by, 'PX', life)
end

-- ds_release with the finished mark dk of the acquisition instead of a set
-- of finished acquisitions; pre as for ds_ledger. The mark says whose the
-- release was: by, the releaser ('1' for the acquisition's own release, a
-- token of its own for each release by id from elsewhere), or '-' when
-- nothing was released; so a retried release answers 2 only when the
-- release it finds was its own, and -1 (not held) when another's was.
local function ds_release_mark(h, dk, m, id, life, pre, by)
  local n, watch, last = ds_leave(h, m, id, nil, pre)
  if n < 0 then
    -- The mark is read with SET ... GET (the ACL recipe has no GET): '-'
    -- when there was none; one found is put back.
    local v = redis.call('SET', dk, '-', 'PX', life, 'GET')
    if v and v ~= '-' then ds_mark(dk, life, v) end
    if v == by then return 2, false, 0 end
    return -1, false, 0
  end
  ds_mark(dk, life, by)
  if n == 0 then return 1, false, 0 end
  return 0, watch, last
end

-- Tell the Clients of holds taken over (a force unlock, a release by id, a
-- deposition), by push on each Client's control channel (core/control.go):
-- prefix .. the client id, the part of the owner before its first ':'.
-- taken lists {owner, key, id}: key is the hold's key in the Client (its
-- Holds), id the acquisition taken, '-' for every acquisition of the hold.
-- One message per Client: 'g:ctl' and the triples, key escaped ('%XX'),
-- then '-'. Classic PUBLISH, which a Cluster forwards from any slot.
local function ds_tell_taken(prefix, taken)
  local msgs, order = {}, {}
  for _, t in ipairs(taken) do
    local c = string.match(t[1], '^[^:]*')
    if not msgs[c] then
      msgs[c] = {'g:ctl'}
      order[#order + 1] = c
    end
    local k = string.gsub(t[2], '[^%w%-%._:{}/]', function(x) return string.format('%%%02X', string.byte(x)) end)
    table.insert(msgs[c], t[1] .. ' ' .. k .. ' ' .. t[3])
  end
  for _, c in ipairs(order) do
    table.insert(msgs[c], '-')
    redis.call('PUBLISH', prefix .. c, table.concat(msgs[c], ' '))
  end
end

-- The holders of the hash h (its fields that do not start with '#'), as
-- ds_tell_taken's list of whole holds of key.
local function ds_holders(h, key)
  local taken = {}
  local f = redis.call('HGETALL', h)
  for i = 1, #f, 2 do
    if string.sub(f[i], 1, 1) ~= '#' then taken[#taken + 1] = {f[i], key, '-'} end
  end
  return taken
end

-- Move the end of explicit acquisition id of holder m in hash h to lease ms
-- from now. Returns whether it did, then what m's ledger promises
-- (ds_promise); when it did not, false and whether id is a live
-- acquisition the watchdog renews (which has no end to move).
local function ds_reset(h, m, id, now, lease)
  local ids, ends = ds_ledger(h, m, now)
  for i, x in ipairs(ids) do
    if x == id then
      if ends[i] == 'w' then return false, true, 0 end
      ends[i] = ds_int(now + tonumber(lease))
      ds_ledger_put(h, m, ids, ends)
      local watch, last = ds_promise(ends)
      return true, watch, last
    end
  end
  return false, false, 0
end

-- Refuse key h when it holds another kind of primitive: every hash-shaped
-- primitive keeps its kind in the field '#k', set when its hash is made.
-- The error is 'WRONGKIND <kind found> <kind wanted> <key>' (the client
-- words it: see WrongKind).
-- Call it before any write. (A key of another type fails by itself with
-- WRONGTYPE; the client reports both as ErrWrongKind.) Returns the marker
-- found: kind, or false when h has none (it does not exist).
local function ds_kind(h, kind)
  local k = redis.call('HGET', h, '#k')
  if k and k ~= kind then
    error({err = 'WRONGKIND ' .. k .. ' ' .. kind .. ' ' .. h})
  end
  return k
end
