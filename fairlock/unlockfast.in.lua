-- Release one acquisition, by its id; when it was the owner's last, hand
-- the lock to the head of the queue (fl_handon in fl.lua: one message, to
-- that waiter only, which holds when it arrives). When the owner still
-- holds but no acquisition left is renewed by the watchdog, the lease falls
-- to the latest explicit end left.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  KEYS[4] the acquisition's finished mark
-- KEYS[5] the fencing counter
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- ARGV[6] the hand-off lease ms
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
--
-- The common cases come first, before the helpers are defined: the owner's
-- only acquisition is released (the HGET of the ledger; TIME too for an
-- explicit lease, to check that it has not ended), the DEL and the finished
-- mark, and then either nobody queues (the LRANGE of the three oldest finds
-- none) or the head of the queue is live (its window end in D, one ZSCORE,
-- has not passed; when it listens, its Client still does: ds_listening,
-- unless it is the releaser's) and its id says its acquisition: the lock
-- goes to it as fl_handon would (fl_give, in grant.lua, and handoff.lua,
-- after it), without pruning the queue first (a waiter whose window ended
-- is dropped when it comes to the head, by the full path, and any full
-- path prunes before it reads the queue). Anything else goes on to the
-- full path (unlock.lua), which has changed nothing yet.
local fu_ledger = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1]) -- for the full path
local fu_grant -- the head to grant the lock to (handoff.lua): {id, owner, acquisition, mode, lease, TIME, ms, next}
if dsf_only(fu_ledger, ARGV[2]) then
  local three = redis.call('LRANGE', KEYS[2], 0, 2)
  local owner, acq, mode, lease, l = string.match(three[1] or '', '^(.*):([^:]+):([we])(%d+)(l?)$')
  local cid = owner and string.match(three[1], '^[^:]*')
  if owner and (l == '' or cid == string.match(ARGV[1], '^[^:]*') or ds_listening(ARGV[4], ARGV[3], cid)) then
    local t = redis.call('TIME')
    local now = ds_ms(t)
    local ends = redis.call('ZSCORE', KEYS[3], three[1])
    if ends and tonumber(ends) > now then
      -- next: the two after it, as dsq_next (queue.lua) writes them
      local next = '-'
      if #three > 1 then next = table.concat(three, ',', 2) end
      fu_grant = {three[1], owner, acq, mode, lease, t, now, next}
    end
  end
  if #three == 0 or fu_grant then
    redis.call('DEL', KEYS[1])
    redis.call('SET', KEYS[4], '1', 'PX', ARGV[5])
    if not fu_grant then return 1 end
  end
end
