-- The leader resigns (or a campaign granted too late is given back): release
-- its acquisition, by id; when it was the leader's last, the leadership is
-- granted to the head candidate (el_handon; the leader's Client is alive),
-- and the observers told.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  KEYS[4] the finished campaigns
-- KEYS[5] the term counter  KEYS[6] V  KEYS[7] the last term
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] the wake-up channel
-- ARGV[4] publish command  ARGV[5] ms to remember the release
-- ARGV[6] the change channel  ARGV[7] hand-off ms  ARGV[8] ms to remember
-- the last term
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
local now = ds_now_ms()
local r = ds_release(KEYS[1], KEYS[4], ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 then
  redis.call('DEL', KEYS[1])
  dsq_prune(KEYS[2], KEYS[3])
  el_handon(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[5], KEYS[7], ARGV[8], ARGV[3], ARGV[4], ARGV[7], ARGV[6], now,
    string.match(ARGV[1], '^[^:]*'))
end
return r
