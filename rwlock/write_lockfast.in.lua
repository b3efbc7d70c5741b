-- Acquire or re-enter the write hold.
-- KEYS[1] H  KEYS[2] L (see rw.lua)  KEYS[3] the fencing counter (Core.FenceKey)
-- KEYS[4] the readers' waiter set  KEYS[5] the writers' waiter set
-- KEYS[6] the acquisition's finished mark (ds_mark)  KEYS[7] the writers' queue (rw.lua)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms
-- ARGV[5] acquisition id  ARGV[6] 'w' (the watchdog renews it) or 'e'
-- ARGV[7] '1' when waiting writers go first  ARGV[8] the hand-off lease ms
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt);
--        {-2, 0} when the acquisition was released or given up before;
--        {0, ms until the last lease ends, server ms} when other owners
--        hold the lock: the waiter is registered until a hand-off lease
--        after that (its own attempt then), and a release may grant it the
--        lock directly (rw_hand_on in rw.lua);
--        {-1, 0} when the owner holds a read lock but not the write lock
--        (an upgrade, which would deadlock).
--
-- The common case comes first, before the helpers are defined: a lock
-- nobody holds, asked for by a caller that will not wait, by an acquisition
-- not finished before. One EXISTS covers the holds, their leases and the
-- finished mark; then the token, the hold and its lease.
if ARGV[3] == '' and redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[6]) == 0 then
  local t = redis.call('TIME')
  local tok, s = ds_token(KEYS[3], t)
  local m = 'w:' .. ARGV[1]
  redis.call('HSET', KEYS[1], '#w', ARGV[1], m, 1, 't:' .. m, s, '#a:' .. m, ARGV[5] .. '=' .. dsf_end(ARGV[6], ARGV[2], t), '#k', 'rwlock')
  redis.call('ZADD', KEYS[2], ds_int(ds_ms(t) + tonumber(ARGV[2])), m)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return {tok, 1}
end
