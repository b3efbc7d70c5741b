-- Release one write hold count of the owner. When the write hold ends, wake
-- every waiter: the lock is now free, or a read lock if the owner still
-- reads (a downgrade), and waiting readers may enter.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- ARGV[1] owner  ARGV[2] release request id (the same on a retried release)
-- ARGV[3] channel  ARGV[4] publish command (PUBLISH or SPUBLISH)
-- Reply: 1 the owner's write hold is released; 0 a hold count remains (or
-- this request was applied before); -1 the owner holds no write lock.
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], 'w:' .. ARGV[1], ARGV[2], now)
if r == 1 then rw_wake_all(KEYS[3], KEYS[4], ARGV[3], ARGV[4]) end
return r
