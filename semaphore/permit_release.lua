-- The full path of permit_releasefast.lua (its arguments and reply).
local now = sem_prune()
local other = 'x:' .. ARGV[3] -- finished by another than its holder
if redis.call('ZREM', KEYS[2], ARGV[3]) == 0 then
  if ds_finished(KEYS[5], ARGV[3]) then
    if ARGV[5] == '' and not ds_finished(KEYS[5], other) then return 2 end
    return -1
  end
  ds_done(KEYS[5], ARGV[3], now, ARGV[4])
  ds_done(KEYS[5], other, now, ARGV[4]) -- nothing released: a retry says so too
  return -1
end
ds_done(KEYS[5], ARGV[3], now, ARGV[4])
if ARGV[5] ~= '' then
  ds_done(KEYS[5], other, now, ARGV[4])
  ds_tell_taken(ARGV[5], {{ARGV[3], KEYS[2], '-'}})
end
sem_give(sem_add(1), 1)
return 1
