-- Acquire or re-enter the reentrant lock: one acquisition, by its id.
-- KEYS[1] the lock: a hash of owner -> hold count, '#t' -> fencing token and
--         '#a:'..owner -> the owner's ledger of acquisitions (lib.lua)
-- KEYS[2] the name's fencing counter  KEYS[3] the waiter set
-- KEYS[4] the finished acquisitions
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms  ARGV[5] fencing counter lifetime ms
-- ARGV[6] acquisition id  ARGV[7] 'w' (the watchdog renews it) or 'e'
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt);
--        {0, remaining lease ms (-1: no expiry)} when another owner holds it;
--        {-2, 0} when the acquisition was released or given up before.
-- The key of another kind of primitive is refused (WRONGKIND).
-- A re-entry never shortens the lease: the key lives as long as the longest
-- promise made to a live acquisition. The free lock is checked first: it is
-- the common case and costs the fewest calls.
local now = ds_now_ms()
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ds_finished(KEYS[4], ARGV[6]) then return {-2, 0} end
  local tok, s = ds_token(KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[6] .. '=' .. ds_end(now, ARGV[7], ARGV[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ds_unwait(KEYS[3], ARGV[3])
  return {tok, 1}
end
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#t', '#k')
if v[3] ~= 'mutex' then ds_kind(KEYS[1], 'mutex') end
if v[1] then
  if ds_finished(KEYS[4], ARGV[6]) then return {-2, 0} end
  local n, new = ds_enter(KEYS[1], ARGV[1], ARGV[6], ARGV[7], ARGV[2], now)
  if new then ds_extend(KEYS[1], ARGV[2]) end
  ds_unwait(KEYS[3], ARGV[3])
  return {tonumber(v[2]), n}
end
local ttl = redis.call('PTTL', KEYS[1])
ds_wait(KEYS[3], ARGV[3], ttl, ARGV[4])
return {0, ttl}
