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

-- Nudge waiter third, the one after the waiter after the one a release
-- granted the lock to or woke, when its entry e says it needs it
-- (mx_nudge): 'w:- <third>' on its Client's channel. The release's own
-- message nudges the second; so that one that vanished too (a process
-- that died with two waiters queued, or two processes) delays the third by
-- about the hand-off lease, not the retry time of its last refusal. third
-- is '-' when none.
local function mx_nudge_third(pub, channel, third, e, now, hl, window)
  if third ~= '-' and mx_nudge(e, now, hl, window) then
    redis.call(pub, channel .. ':' .. string.match(third, '^[^:]*'), 'w:- ' .. third)
  end
end

-- Grant the lock h, deleted by the caller, to waiter id of the mutex's
-- waiters, which waits for acquisition acq (mode, lease ms): a new hold with
-- a fresh fencing token (fence; t a TIME reply, now its ms), its
-- acquisition in the ledger, a lease of at most hl ms until its Client
-- renews it, and the waiters flag ('#q', with the value qend the lock had:
-- see lockfast.lua) when others wait (after, the waiter after it, is not
-- '-'). The grant is published on the channel of the waiter's Client
-- ('g:<id> <acq> <token> <now> <next>', see mx.lua); next names the waiter
-- after it when nudge says it needs it (mx_nudge), with a message of its
-- own when it waits in another Client (ds_tell). The caller removes id from
-- the waiters.
local function mx_grant(h, fence, channel, pub, hl, t, now, id, acq, mode, lease, after, nudge, qend)
  local _, s = ds_token(fence, t)
  local ttl, e = hl, 'w'
  if mode ~= 'w' then
    ttl = math.min(ttl, tonumber(lease))
    e = ds_int(now + tonumber(lease))
  end
  local owner = id
  if string.sub(id, -#acq - 1) == ':' .. acq then owner = string.sub(id, 1, -#acq - 2) end
  if after ~= '-' then
    redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, acq .. '=' .. e, '#q', qend)
  else
    redis.call('HSET', h, owner, 1, '#t', s, '#k', 'mutex', '#a:' .. owner, acq .. '=' .. e)
  end
  redis.call('PEXPIRE', h, ds_int(ttl))
  local next = '-'
  if nudge then next = after end
  ds_tell(pub, channel, id, next, 'g:' .. id .. ' ' .. acq .. ' ' .. s .. ' ' .. ds_int(now) .. ' ' .. next)
end
