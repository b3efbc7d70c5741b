-- The grant of the fair lock to the head of its queue, shared by the
-- release's common case (unlockfast.lua) and fl_handon (fl.lua): before the
-- shared library in the unlock script, after it in the leave script, so
-- lib.lua's helpers are inlined here (grant.in.lua -> grant.lua, go
-- generate ./internal/core).

-- Grant the lock h, deleted by the caller, to waiter id, which left the
-- queue and waits for acquisition acq of owner (mode, lease ms, from its
-- id): a new hold with a fresh fencing token (fence; t a TIME reply, now
-- its ms), its acquisition in the ledger, a lease of at most hl ms until
-- its Client renews it, and 'g:<id> <acquisition id> <token> <now> <next>'
-- told on its Client's channel (ds_tell): the head holds when it arrives,
-- and next (the two waiters after it, dsq_next in queue.lua, their Clients
-- told 'w:- <next>' when they are others), nudged, bound their sleep
-- by hl in case the head vanished (its grant then lapses and the next
-- takes the free lock, or, when it vanished too, the third wakes it:
-- fairlock/lock.lua).
local function fl_give(h, fence, channel, pub, hl, t, now, id, owner, acq, mode, lease, next)
  local _, s = ds_token(fence, t)
  local ttl, e = ds_handed(hl, mode, lease, now)
  redis.call('HSET', h, owner, 1, '#t', s, '#k', 'fairlock', '#a:' .. owner, acq .. '=' .. e)
  redis.call('PEXPIRE', h, ds_int(ttl))
  ds_tell(pub, channel, id, next, 'g:' .. id .. ' ' .. acq .. ' ' .. s .. ' ' .. ds_int(now) .. ' ' .. next)
end
