-- Release one write acquisition, by its id. When the write hold ends, wake
-- every waiter: the lock is now free, or a read lock if the owner still
-- reads (a downgrade), and waiting readers may enter.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the finished acquisitions
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], KEYS[5], 'w:' .. ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 then rw_wake_all(KEYS[3], KEYS[4], ARGV[3], ARGV[4]) end
return r
