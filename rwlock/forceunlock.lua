-- Remove the write hold ('w') or every read hold ('r'), whoever holds them,
-- and wake every waiter.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- ARGV[1] 'w' or 'r'  ARGV[2] channel  ARGV[3] publish command
-- Reply: how many holds were removed.
local now = rw_prune(KEYS[1], KEYS[2])
local gone = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(m, 1, 1) == ARGV[1] then
    rw_drop(KEYS[1], m)
    redis.call('ZREM', KEYS[2], m)
    gone = gone + 1
  end
end
if gone > 0 then
  rw_expire(KEYS[1], KEYS[2], now)
  rw_wake_all(KEYS[3], KEYS[4], ARGV[2], ARGV[3])
end
return gone
