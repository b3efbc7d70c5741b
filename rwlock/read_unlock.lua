-- The full path of read_unlockfast.lua (its keys, arguments and reply).
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], KEYS[5], 'r:' .. ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 and redis.call('EXISTS', KEYS[2]) == 0 and not rw_wake_writer(KEYS[4], ARGV[3], ARGV[4], now, ARGV[6]) then
  ds_notify(KEYS[3], ARGV[3], '', ARGV[4])
end
return r
