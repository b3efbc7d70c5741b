-- Remove the write hold ('w') or every read hold ('r'), whoever holds them,
-- tell their holders' Clients on their control channels (ds_tell_taken),
-- and hand the lock on to the waiters (rw_hand_on).
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the writers' queue (rw.lua)  KEYS[6] the fencing counter (Core.FenceKey)
-- ARGV[1] 'w' or 'r'  ARGV[2] channel prefix (rw_hand)  ARGV[3] publish command
-- ARGV[4] the prefix of the control channels  ARGV[5] the hand-off lease ms
-- ARGV[6] '1' when waiting writers go first
-- Reply: how many holds were removed.
local now = rw_prune(KEYS[1], KEYS[2])
local gone = {}
local key = KEYS[1] -- the side's key in its holders' Clients
if ARGV[1] == 'r' then key = KEYS[2] end
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(m, 1, 1) == ARGV[1] then
    rw_drop(KEYS[1], m)
    redis.call('ZREM', KEYS[2], m)
    gone[#gone + 1] = {string.sub(m, 3), key, '-'}
  end
end
ds_tell_taken(ARGV[4], gone)
if #gone > 0 then
  rw_expire(KEYS[1], KEYS[2], now)
  rw_hand_on(KEYS[1], KEYS[2], KEYS[6], KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[3], now, ARGV[5], ARGV[6])
end
return #gone
