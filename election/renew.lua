-- Extend the leader's lease to the watchdog lease from now (the watchdog's
-- renewal), while it leads.
-- KEYS[1] H  ARGV[1] owner  ARGV[2] lease ms
-- Reply: 1 extended, 0 the owner does not lead.
local a = redis.call('HGET', KEYS[1], '#a:' .. ARGV[1])
if not a or not string.find(a, '=w', 1, true) then return 0 end
ds_extend(KEYS[1], ARGV[2])
return 1
