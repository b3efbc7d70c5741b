-- The full path of the lock script (lockfast.lua). A waiter (ARGV[5] set)
-- is '<owner>:<acquisition id>' (mx.lua).
-- A free lock is granted to whoever asks, waiter or not: releases hand it
-- directly to a waiter that waited too long, so it is never free then. A
-- re-entry never shortens the lease: the key lives as long as the longest
-- promise made to a live acquisition.
local waiter = ARGV[5] and ARGV[1] .. ':' .. ARGV[3]
local e = redis.call('EXISTS', KEYS[1], KEYS[4])
if e > 0 and redis.call('EXISTS', KEYS[4]) == 1 then return {-2, 0} end
if e == 0 then
  local tok, s = ds_token(KEYS[2], ds_clock())
  if waiter then mx_unwait(KEYS[3], KEYS[5], waiter) end
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[3] .. '=' .. ds_end(nil, ARGV[4], ARGV[2]))
  mx_flag(KEYS[1], KEYS[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#t', '#k', '#q')
if v[3] ~= 'mutex' then ds_kind(KEYS[1], 'mutex') end
if v[1] then
  local n = ds_enter(KEYS[1], ARGV[1], ARGV[3], ARGV[4], ARGV[2], nil, true)
  ds_extend(KEYS[1], ARGV[2])
  if waiter then mx_unwait(KEYS[3], KEYS[5], waiter, KEYS[1]) end
  return {tonumber(v[2]), n}
end
local ttl = redis.call('PTTL', KEYS[1])
if waiter then
  mx_wait(KEYS[1], KEYS[3], KEYS[5], waiter, ttl, ARGV[5], ARGV[3], ARGV[4] .. (ARGV[6] or ''), ARGV[2], v[4], ds_clock(), ds_now_ms())
end
return {0, ttl, ds_now_ms()}
