-- Depose the leader, whoever it is: delete H, wake the head candidate and
-- tell the observers and the deposed leader (on its Client's control
-- channel, ds_tell_taken).
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] the wake-up channel  ARGV[2] publish command  ARGV[3] the change
-- channel  ARGV[4] hand-off ms (see dsq_wake)  ARGV[5] the prefix of the
-- control channels
-- Reply: 1 when someone led, 0 when nobody did.
ds_kind(KEYS[1], 'election')
ds_tell_taken(ARGV[5], ds_holders(KEYS[1], KEYS[1]))
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
dsq_prune(KEYS[2], KEYS[3])
el_vacant(KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[4], ARGV[3])
return 1
