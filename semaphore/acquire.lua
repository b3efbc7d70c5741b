-- The full path of acquirefast.lua (its arguments and reply).
local now = sem_prune()
if ds_finished(KEYS[5], ARGV[6]) then return -2 end
if ds_finished(KEYS[5], 'g:' .. ARGV[6]) then return 1 end
if sem_avail() >= tonumber(ARGV[3]) then
  sem_add('-' .. ARGV[3])
  ds_done(KEYS[5], 'g:' .. ARGV[6], now, ARGV[7])
  ds_unwait(KEYS[3], ARGV[4])
  return 1
end
sem_wait(ARGV[4], ARGV[3], ARGV[5], now)
if not sem_exists then return -4 end
return 0
