-- Release one acquisition, by its id; when it was the owner's last, delete
-- the lock and wake one waiter per subscribed process (only one can take
-- it; a woken waiter that fails waits for the next release). When the
-- owner still holds but no acquisition left is renewed by the watchdog, the
-- lease falls to the latest explicit end left.
-- KEYS[1] the lock  KEYS[2] the waiter set  KEYS[3] the finished acquisitions
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
local now = ds_now_ms()
local r, watch, last = ds_release(KEYS[1], KEYS[3], ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 then
  redis.call('DEL', KEYS[1])
  ds_notify(KEYS[2], ARGV[3], 'n:1', ARGV[4])
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], string.format('%d', last - now))
end
return r
