-- The grant of a lock to its oldest waiter, shared by the release's common
-- case (unlockfast.lua) and mx_next (mx.lua): before the shared library in
-- the unlock script, after it in the others, so lib.lua's helpers are
-- inlined here (grant.in.lua -> grant.lua, go generate ./internal/core).

-- Whether the waiter after the one granted must be nudged: its entry e (in
-- E, mx.lua: '<end> ...', false when gone) says it tries again by itself
-- at end - window ms; when that comes within the hand-off lease hl of now,
-- it bounds its sleep by the lease already and needs no message. Without
-- window (nil) it is always nudged.
local function mx_nudge(e, now, hl, window)
  if not window or not e then return true end
  local fend = tonumber(string.match(e, '^(%d+) '))
  return not fend or fend - tonumber(window) > now + hl
end

-- The notifier's <next> for a release that chose waiter id (to grant the
-- lock to or to wake): after, the waiter after it, and third, the one
-- after that ('-' when none), each when its entry (ea, e3 in E, false when
-- gone) says it needs a nudge (mx_nudge): '<after>,<third>', one of them,
-- or '-'. ds_tell nudges them on id's Client's channel and on the first
-- one's; a third whose Client is neither gets 'w:- <third>' of its own,
-- here. So a chosen waiter that vanished delays the next by at most the
-- hand-off lease, and two in a row (a process that died with both queued)
-- delay the third by about as much, not until the retry time of its last
-- refusal.
local function mx_next_of(pub, channel, id, after, ea, third, e3, now, hl, window)
  local next = '-'
  if after ~= '-' and mx_nudge(ea, now, hl, window) then next = after end
  if third ~= '-' and mx_nudge(e3, now, hl, window) then
    local c = string.match(third, '^[^:]*')
    if next == '-' then
      next = third
    elseif c == string.match(id, '^[^:]*') or c == string.match(after, '^[^:]*') then
      next = next .. ',' .. third
    else
      redis.call(pub, channel .. ':' .. c, 'w:- ' .. third)
    end
  end
  return next
end

-- Grant the lock h, deleted by the caller, to waiter id of the mutex's
-- waiters, which waits for acquisition acq (mode, lease ms): a new hold with
-- a fresh fencing token (fence; t a TIME reply, now its ms), its
-- acquisition in the ledger, a lease of at most hl ms until its Client
-- renews it, and the waiters flag ('#q', with the value qend the lock had:
-- see lockfast.lua) when others wait (after, the waiter after it, is not
-- '-'). The grant is published on the channel of the waiter's Client
-- ('g:<id> <acq> <token> <now> <next>', see mx.lua); next names the
-- waiters after it that need a nudge (mx_next_of), with a message of its
-- own when the first waits in another Client (ds_tell). The caller removes
-- id from the waiters. A waiter that listens (its entry's mode ends in
-- 'l', mx.lua) whose Client has no subscription on this server is granted
-- nothing, and told nothing: returns false (the caller hands the lock on),
-- else true. The grant is never published before it is made: a replica
-- delivers what its master publishes to its own subscribers, whom the
-- master does not count, and a waiter told of a grant holds. live (nil:
-- none) is the id of a Client known to be alive, the releaser's own, whose
-- waiters need no asking.
local function mx_grant(h, fence, channel, pub, hl, t, now, id, acq, mode, lease, after, next, qend, live)
  local cid = string.match(id, '^[^:]*')
  if #mode > 1 and cid ~= live and not ds_listening(pub, channel, cid) then return false end
  local _, s = ds_token(fence, t)
  local ttl, e = ds_handed(hl, string.sub(mode, 1, 1), lease, now)
  local owner = id
  if string.sub(id, -#acq - 1) == ':' .. acq then owner = string.sub(id, 1, -#acq - 2) end
  if after ~= '-' then
    redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, acq .. '=' .. e, '#q', qend)
  else
    redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, acq .. '=' .. e)
  end
  redis.call('PEXPIRE', h, ds_int(ttl))
  ds_tell(pub, channel, id, next, 'g:' .. id .. ' ' .. acq .. ' ' .. s .. ' ' .. ds_int(now) .. ' ' .. next)
  return true
end
