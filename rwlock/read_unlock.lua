-- Release one read acquisition, by its id. When that frees the lock, wake
-- one waiting writer (rw_wake_writer), or the waiting readers when no writer
-- waits.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the finished acquisitions
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- ARGV[6] the hand-off lease ms (rw_wake_writer)
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], KEYS[5], 'r:' .. ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 and redis.call('EXISTS', KEYS[2]) == 0 and not rw_wake_writer(KEYS[4], ARGV[3], ARGV[4], now, ARGV[6]) then
  ds_notify(KEYS[3], ARGV[3], '', ARGV[4])
end
return r
