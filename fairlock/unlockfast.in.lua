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
-- The common case comes first, before the helpers are defined: the owner's
-- only acquisition is released and nobody queues. The HGET of the ledger,
-- the EXISTS of the queue, the DEL and the finished mark (TIME too for an
-- explicit lease, to check that it has not ended). Anything else goes on
-- to the full path (unlock.lua).
if dsf_only(redis.call('HGET', KEYS[1], '#a:' .. ARGV[1]), ARGV[2]) and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[5])
  return 1
end
