-- Depose the leader, whoever it is: delete H, grant the leadership to the
-- head candidate (el_handon) and tell the observers and the deposed leader
-- (on its Client's control channel, ds_tell_taken).
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  KEYS[4] the finished campaigns (unused)
-- KEYS[5] the term counter  KEYS[6] V  KEYS[7] the last term
-- ARGV[1] the wake-up channel  ARGV[2] publish command  ARGV[3] the change
-- channel  ARGV[4] hand-off ms  ARGV[5] the prefix of the control channels
-- ARGV[6] ms to remember the last term
-- Reply: 1 when someone led, 0 when nobody did.
ds_kind(KEYS[1], 'election')
ds_tell_taken(ARGV[5], ds_holders(KEYS[1], KEYS[1]))
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
local now = dsq_prune(KEYS[2], KEYS[3])
el_handon(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[5], KEYS[7], ARGV[6], ARGV[1], ARGV[2], ARGV[4], ARGV[3], now)
return 1
