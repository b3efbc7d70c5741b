-- Release one acquisition, by its id; when it was the owner's last, delete
-- the lock and wake the head of the queue (one message, to that waiter
-- only). When the owner still holds but no acquisition left is renewed by
-- the watchdog, the lease falls to the latest explicit end left.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  KEYS[4] the finished acquisitions
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- ARGV[6] the hand-off lease ms (fl_wake_head)
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
local now = ds_now_ms()
local r, watch, last = ds_release(KEYS[1], KEYS[4], ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 then
  redis.call('DEL', KEYS[1])
  fl_prune(KEYS[2], KEYS[3])
  fl_wake_head(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[6])
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], fl_int(last - now))
end
return r
