-- Extend the leader's lease to the watchdog lease from now (the watchdog's
-- renewal), while it leads, and the last term's (campaign.lua) to ARGV[3]
-- ms after it.
-- KEYS[1] H  KEYS[2] the last term  ARGV[1] owner  ARGV[2] lease ms
-- ARGV[3] ms to remember the last term after the leadership ends
-- Reply: 1 extended, 0 the owner does not lead.
local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
if not a or not string.find(a, '=w', 1, true) then return 0 end
ds_extend(KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1
