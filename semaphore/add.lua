-- The full path of addfast.lua (its arguments and reply).
sem_prune()
if ARGV[4] == 'r' and not sem_exists then return {-1, 0} end
local n = tonumber(ARGV[3])
local v = sem_avail()
if (n > 0 and v + redis.call('ZCARD', KEYS[2]) > sem_max - n) or (n < 0 and v < -sem_max - n) then
  return {0, v}
end
v = sem_add(ARGV[3])
sem_give(v, n)
return {1, v}
