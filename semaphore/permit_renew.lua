-- Extend a held permit's lease to now + lease (the watchdog's renewal and
-- Permit.UpdateLease). A permit whose lease ended is not revived.
-- ARGV[3] permit id  ARGV[4] lease ms
-- Reply: 1 extended, 0 not held.
local now = sem_prune()
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[4]), ARGV[3])
return 1
