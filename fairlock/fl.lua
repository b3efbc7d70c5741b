-- Helpers of the fair lock's scripts, after the shared library and the
-- queue's (core.QueueLib).
--
-- A waiter id is '<owner>:<acquisition id>:<mode><lease ms>[l]' (mode 'w',
-- renewed by the watchdog, or 'e', an explicit lease; 'l' when the waiter
-- listens on its Client's channel, acquire.Lock.SaysListens): what a
-- release needs to grant the acquisition directly. Each Client's waiters
-- listen on a channel of their own, channel .. ':' .. <client id> (ds_tell).

-- The lock h was released by its last holder and deleted: hand it to the
-- head of the queue q (pruned already), now ms on the server clock: the
-- head leaves the queue and is granted the lock (fl_give, grant.lua). Heads
-- that listen whose Client has no subscription on this server (their
-- process died) leave the queue first, with every waiter of their Client
-- that listens, and are passed over for the next (dsq_head). A head whose
-- id says nothing of its acquisition is woken instead (dsq_wake). live
-- (nil: none) is the id of a Client known to be alive, the releaser's own,
-- whose waiters need no asking. Returns 1 when it told someone, 0 when
-- nobody queues.
local function fl_handon(h, q, d, fence, channel, pub, hl, now, live)
  local three = redis.call('LRANGE', q, 0, 2)
  if dsq_head(q, d, channel, pub, live, three[1] or false) ~= (three[1] or false) then
    three = redis.call('LRANGE', q, 0, 2)
  end
  local id = three[1]
  if not id then return 0 end
  local owner, acq, mode, lease = string.match(id, '^(.*):([^:]+):([we])(%d+)l?$')
  if not owner then return dsq_wake(q, d, channel, pub, hl, false, true) end
  dsq_granted(q, d, id)
  fl_give(h, fence, channel, pub, hl, ds_clock(), now, id, owner, acq, mode, lease, dsq_next(three))
  return 1
end

-- Release acquisition acq of owner in the lock h (its finished mark dk
-- remembered life ms) and, when that was the owner's last, hand the lock to
-- the head of the queue (fl_handon: owner's Client is alive); when the
-- owner still holds but no acquisition left is renewed by the watchdog,
-- the lease falls to the latest explicit end left. It is the acquisition's
-- own release (its finished mark says '1', ds_release_mark); pre is the
-- owner's ledger the caller read already (nil: not read). Returns what
-- ds_release_mark does.
local function fl_release(h, q, d, dk, fence, owner, acq, life, channel, pub, hl, pre)
  local now = ds_now_ms()
  local r, watch, last = ds_release_mark(h, dk, owner, acq, life, pre, '1')
  if r == 1 then
    redis.call('DEL', h)
    dsq_prune(q, d)
    fl_handon(h, q, d, fence, channel, pub, hl, now, string.match(owner, '^[^:]*'))
  elseif r == 0 and not watch then
    redis.call('PEXPIRE', h, ds_int(last - now))
  end
  return r
end
