-- The full path of write_lockfast.lua (its keys, arguments and reply).
local now, live = rw_prune(KEYS[1], KEYS[2])
local w = redis.call('HGET', KEYS[1], '#w')
if w == ARGV[1] or (not w and live == 0) then
  if redis.call('EXISTS', KEYS[6]) == 1 then return {-2, 0} end
  ds_unwait(KEYS[5], ARGV[3])
  ds_unwait(KEYS[7], ARGV[3])
  redis.call('HSET', KEYS[1], '#w', ARGV[1])
  return rw_grant(KEYS[1], KEYS[2], 'w:' .. ARGV[1], now, ARGV[2], KEYS[3], ARGV[5], ARGV[6])
end
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[1]) == 1 then
  ds_unwait(KEYS[5], ARGV[3])
  ds_unwait(KEYS[7], ARGV[3])
  return {-1, 0}
end
local retry = rw_last(KEYS[2], now)
-- The writer tries again by itself after retry ms: its registration ends a
-- hand-off lease later (at most a window), so that one that vanished holds
-- readers back (writer preference) no longer than that.
ds_wait(KEYS[5], ARGV[3], retry, math.min(tonumber(ARGV[4]), tonumber(ARGV[8])))
rw_queue(KEYS[7], KEYS[5], ARGV[3])
return {0, retry, now}
