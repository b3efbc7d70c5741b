-- Acquire or re-enter the fair lock: one acquisition, by its id. Granted
-- when nobody holds it and the caller is the head of the queue, or the
-- queue is empty.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D (see lock.lua)  KEYS[4] the fencing counter (Core.FenceKey)
-- KEYS[5] the acquisition's finished mark (ds_mark)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id (fl.lua; '' when the
-- caller will not wait: it is then never queued)  ARGV[4] waiter window ms
-- ARGV[5] acquisition id
-- ARGV[6] 'w' (the watchdog renews it) or 'e' (an explicit lease)
-- ARGV[7] channel  ARGV[8] publish command  ARGV[9] the hand-off lease ms
-- (to wake the head of the queue of a lock that lapsed: lock.lua)
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt: its lease is
--        then renewed from now, as a new grant's would be, so the caller
--        may count it from this attempt's send);
--        {0, ms after which to try again, server ms} when refused; a queued
--        waiter must try again by then to keep its place, unless a release
--        grants it the lock first (fl.lua);
--        {-2, 0} when the acquisition was released or given up before.
-- A re-entry never shortens the lease (see the mutex).
--
-- The common case comes first, before the helpers are defined: a free lock
-- nobody queues for, asked for by a caller that will not wait, by an
-- acquisition not finished before. One EXISTS covers the lock, the queue
-- and the finished mark; then the token, the HSET and PEXPIRE of the hold.
-- Anything else goes on to the full path (lock.lua).
if ARGV[3] == '' and redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[5]) == 0 then
  local t = redis.call('TIME')
  local tok, s = ds_token(KEYS[4], t)
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'fairlock', '#a:' .. ARGV[1], ARGV[5] .. '=' .. dsf_end(ARGV[6], ARGV[2], t))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
