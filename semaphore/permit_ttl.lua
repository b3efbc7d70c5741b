-- The remaining lease of a permit.
-- ARGV[3] permit id
-- Reply: ms until the permit's lease ends; -1 not held.
local now = sem_prune()
local s = redis.call('ZSCORE', KEYS[2], ARGV[3])
if not s then return -1 end
return tonumber(s) - now
