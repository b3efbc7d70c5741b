-- A waiter gives up (its context ended or its wait budget was spent): remove
-- it from the queue and its window, and if it was the head of the queue and
-- the lock is free, wake the new head.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] waiter id  ARGV[2] channel  ARGV[3] publish command
-- ARGV[4] the hand-off lease ms (fl_wake_head)
-- Reply: 1 when the waiter was queued, 0 when it was not.
local head = redis.call('LINDEX', KEYS[2], 0)
local was = redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local now = fl_prune(KEYS[2], KEYS[3])
fl_expire(KEYS[2], KEYS[3], now)
if head == ARGV[1] then fl_wake_head(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4]) end
return was
