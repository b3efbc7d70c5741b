-- The full path of unlockfast.lua (its keys, arguments and reply).
local now = ds_now_ms()
local r, watch, last = ds_release_mark(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[5], nil, '1')
if r == 1 then
  redis.call('DEL', KEYS[1])
  dsq_prune(KEYS[2], KEYS[3])
  dsq_wake(KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[6])
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], ds_int(last - now))
end
return r
