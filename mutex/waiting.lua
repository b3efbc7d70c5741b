-- How many waiters are registered and not yet forgotten (changes nothing).
-- KEYS[1] E, the waiters' entries (mx.lua)
-- Reply: the count of entries whose end has not passed.
local now = ds_now_ms()
local n = 0
local e = redis.call('HGETALL', KEYS[1])
for i = 2, #e, 2 do
  if tonumber(string.match(e[i], '^%S+')) > now then n = n + 1 end
end
return n
