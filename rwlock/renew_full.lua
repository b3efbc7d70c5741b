-- The rest of renew.lua: the hold's lease ended (or it has none). Drop the
-- holds whose lease ended; a hold still there is renewed as above.
local now = rw_prune(KEYS[1], KEYS[2])
local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
if not a or not string.find(a, '=w', 1, true) then return 0 end
local e = now + tonumber(ARGV[2])
if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or 0) < e then
  redis.call('ZADD', KEYS[2], ds_int(e), ARGV[1])
  rw_expire(KEYS[1], KEYS[2], now)
end
return 1
