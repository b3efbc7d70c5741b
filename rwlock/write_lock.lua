-- Acquire or re-enter the write hold.
-- KEYS[1] H  KEYS[2] L (see rw.lua)  KEYS[3] the name's fencing counter
-- KEYS[4] the readers' waiter set  KEYS[5] the writers' waiter set
-- KEYS[6] the finished acquisitions
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms  ARGV[5] fencing counter lifetime ms
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt);
--        {-2, 0} when the acquisition was released or given up before;
--        {0, ms until the last lease ends} when other owners hold the lock;
--        {-1, 0} when the owner holds a read lock but not the write lock
--        (an upgrade, which would deadlock).
local now, live = rw_prune(KEYS[1], KEYS[2])
local w = redis.call('HGET', KEYS[1], '#w')
if w == ARGV[1] or (not w and live == 0) then
  if ds_finished(KEYS[6], ARGV[6]) then return {-2, 0} end
  ds_unwait(KEYS[5], ARGV[3])
  redis.call('HSET', KEYS[1], '#w', ARGV[1])
  return rw_grant(KEYS[1], KEYS[2], 'w:' .. ARGV[1], now, ARGV[2], KEYS[3], ARGV[5], ARGV[6], ARGV[7])
end
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[1]) == 1 then
  ds_unwait(KEYS[5], ARGV[3])
  return {-1, 0}
end
local retry = rw_last(KEYS[2], now)
ds_wait(KEYS[5], ARGV[3], retry, ARGV[4])
return {0, retry}
