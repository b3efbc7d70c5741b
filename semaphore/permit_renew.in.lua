-- Extend a held permit's lease to now + lease (the watchdog's renewal and
-- Permit.UpdateLease). A permit whose lease ended is not revived.
-- ARGV[3] permit id  ARGV[4] lease ms
-- Reply: 1 extended, 0 not held.
--
-- The common case first, before the helpers are defined: the permit's lease
-- has not ended. Otherwise the full path returns the ended leases to the
-- pool (sem_prune), this one among them.
local t = redis.call('TIME')
local now = ds_ms(t)
local s = redis.call('ZSCORE', KEYS[2], ARGV[3])
if s and tonumber(s) > now then
  redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[4]), ARGV[3])
  do return 1 end
end
