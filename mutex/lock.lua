-- Acquire or re-enter the reentrant lock: one acquisition, by its id.
-- KEYS[1] the lock: a hash of owner -> hold count, '#t' -> fencing token and
--         '#a:'..owner -> the owner's ledger of acquisitions (lib.lua)
-- KEYS[2] the name's fencing counter  KEYS[3] Q and KEYS[4] E, the waiters
-- (mx.lua)  KEYS[5] the acquisition's finished mark (ds_mark)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms  ARGV[5] fencing counter lifetime ms
-- ARGV[6] acquisition id  ARGV[7] 'w' (the watchdog renews it) or 'e'
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt, or the
--        confirmation of a hand-off: it extends the lease to the full one);
--        {0, remaining lease ms (-1: no expiry), server ms} when another
--        owner holds it (a waiter is registered: mx_wait);
--        {-2, 0} when the acquisition was released or given up before.
-- The key of another kind of primitive is refused (WRONGKIND).
-- A free lock is granted to whoever asks, waiter or not: releases hand it
-- directly to a waiter that waited too long, so it is never free then. A
-- re-entry never shortens the lease: the key lives as long as the longest
-- promise made to a live acquisition. The common case, a free lock, costs
-- one EXISTS (the lock and the finished mark at once), the token and the
-- HSET and PEXPIRE of the hold.
local e = redis.call('EXISTS', KEYS[1], KEYS[5])
if e > 0 and redis.call('EXISTS', KEYS[5]) == 1 then return {-2, 0} end
if e == 0 then
  local tok, s = ds_token(KEYS[2], ARGV[5])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[6] .. '=' .. ds_end(nil, ARGV[7], ARGV[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[3] ~= '' then mx_unwait(KEYS[3], KEYS[4], ARGV[3]) end
  return {tok, 1}
end
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#t', '#k')
if v[3] ~= 'mutex' then ds_kind(KEYS[1], 'mutex') end
if v[1] then
  local n = ds_enter(KEYS[1], ARGV[1], ARGV[6], ARGV[7], ARGV[2], nil, true)
  ds_extend(KEYS[1], ARGV[2])
  if ARGV[3] ~= '' then mx_unwait(KEYS[3], KEYS[4], ARGV[3]) end
  return {tonumber(v[2]), n}
end
local ttl = redis.call('PTTL', KEYS[1])
if ARGV[3] ~= '' then mx_wait(KEYS[3], KEYS[4], ARGV[3], ttl, ARGV[4], ARGV[6], ARGV[7], ARGV[2]) end
return {0, ttl, ds_now_ms()}
