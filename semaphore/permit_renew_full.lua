-- The rest of permit_renew.lua: the permit's lease ended, or it is not held.
local now = sem_prune()
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[4]), ARGV[3])
return 1
