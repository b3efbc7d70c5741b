-- Inspect one side of the lock (changes nothing).
-- KEYS[1] H  KEYS[2] L  ARGV[1] 'w' or 'r'  ARGV[2] owner ('' for none)
-- Reply: {owners holding that side, the owner's hold count on it, ms until
-- the side's last lease ends (0 when nobody holds it)}.
local now = ds_now_ms()
local holders, ttl = 0, 0
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ds_int(now), '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  if string.sub(live[i], 1, 1) == ARGV[1] then
    holders = holders + 1
    ttl = math.max(ttl, tonumber(live[i + 1]) - now)
  end
end
local n = 0
if ARGV[2] ~= '' then
  local m = ARGV[1] .. ':' .. ARGV[2]
  local exp = redis.call('ZSCORE', KEYS[2], m)
  if exp and tonumber(exp) > now then
    n = #ds_ledger(KEYS[1], m, now)
  end
end
return {holders, n, ttl}
