-- Acquire or re-enter a read hold.
-- KEYS[1] H  KEYS[2] L (see rw.lua)  KEYS[3] the name's fencing counter
-- KEYS[4] the readers' waiter set  KEYS[5] the writers' waiter set
-- KEYS[6] the finished acquisitions
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms  ARGV[5] fencing counter lifetime ms
-- ARGV[8] '1' when waiting writers go first (writer preference)
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt);
--        {-2, 0} when the acquisition was released or given up before;
--        {0, ms after which trying again may succeed} when refused: another
--        owner holds the write lock, or (writer preference) a writer waits.
local now = rw_prune(KEYS[1], KEYS[2])
local m = 'r:' .. ARGV[1]
local w = redis.call('HGET', KEYS[1], '#w')
local retry
if w and w ~= ARGV[1] then
  retry = tonumber(redis.call('ZSCORE', KEYS[2], 'w:' .. w) or now) - now
elseif not w and ARGV[8] == '1' and redis.call('HEXISTS', KEYS[1], m) == 0 then
  -- A new reader queues behind waiting writers; re-entries and the writer
  -- itself do not (they would deadlock).
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', rw_int(now))
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if #first > 0 then retry = tonumber(first[2]) - now end
end
if retry then
  ds_wait(KEYS[4], ARGV[3], retry, ARGV[4])
  return {0, retry}
end
if ds_finished(KEYS[6], ARGV[6]) then return {-2, 0} end
ds_unwait(KEYS[4], ARGV[3])
return rw_grant(KEYS[1], KEYS[2], m, now, ARGV[2], KEYS[3], ARGV[5], ARGV[6], ARGV[7])
