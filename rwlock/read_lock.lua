-- The full path of read_lockfast.lua (its keys, arguments and reply).
local now = rw_prune(KEYS[1], KEYS[2])
local m = 'r:' .. ARGV[1]
local w = redis.call('HGET', KEYS[1], '#w')
local retry
if w and w ~= ARGV[1] then
  retry = tonumber(redis.call('ZSCORE', KEYS[2], 'w:' .. w) or now) - now
elseif not w and ARGV[7] == '1' and redis.call('HEXISTS', KEYS[1], m) == 0 then
  -- A new reader queues behind waiting writers; re-entries and the writer
  -- itself do not (they would deadlock).
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ds_int(now))
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if #first > 0 then retry = tonumber(first[2]) - now end
end
if retry then
  ds_wait(KEYS[4], ARGV[3], retry, ARGV[4])
  return {0, retry, now}
end
if redis.call('EXISTS', KEYS[6]) == 1 then return {-2, 0} end
ds_unwait(KEYS[4], ARGV[3])
return rw_grant(KEYS[1], KEYS[2], m, now, ARGV[2], KEYS[3], ARGV[5], ARGV[6])
