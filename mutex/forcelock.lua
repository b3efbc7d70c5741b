-- Take the lock whoever holds it (ForceLock): one acquisition, by its id, of
-- a new hold with a new fencing token. The hold it replaces is deleted, and
-- its owner's Client told at once on its control channel (core/control.go),
-- with classic PUBLISH, which a Cluster forwards from any slot. Waiters keep
-- their places and wait for the new holder.
-- KEYS and ARGV as lock.lua's, of an attempt that does not wait: [1] the
-- lock  [2] the fencing counter  [3] Q, the waiters (mx.lua)  [4] the
-- acquisition's finished mark; ARGV[1]..ARGV[4]
-- ARGV[5] the prefix of the Clients' control channels
-- Reply: {token, hold count, 1 when it replaced another owner's hold}, the
-- caller's owner holding it (a re-entry when it held it already, or a
-- repeated attempt); {-2, 0} when the acquisition was released or given up
-- before. Another kind is refused (WRONGKIND).
if redis.call('EXISTS', KEYS[4]) == 1 then return {-2, 0} end
local replaced = 0
if ds_kind(KEYS[1], 'mutex') then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
    local n = ds_enter(KEYS[1], ARGV[1], ARGV[3], ARGV[4], ARGV[2], nil, true)
    ds_extend(KEYS[1], ARGV[2])
    return {tonumber(redis.call('HGET', KEYS[1], '#t')), n}
  end
  local taken = ds_holders(KEYS[1], KEYS[1])
  if #taken > 0 then replaced = 1 end
  ds_tell_taken(ARGV[5], taken)
  redis.call('DEL', KEYS[1])
end
local tok, s = ds_token(KEYS[2], ds_clock())
redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[3] .. '=' .. ds_end(nil, ARGV[4], ARGV[2]))
mx_flag(KEYS[1], KEYS[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {tok, 1, replaced}
