-- Count the latch down by one; at zero delete it (the latch opens) and wake
-- every awaiter.
-- KEYS[1] the latch (see await.lua)  KEYS[2] the waiter set
-- ARGV[1] channel  ARGV[2] publish command (PUBLISH or SPUBLISH)
-- Reply: the count after; 0 when the latch is open (an open latch stays at 0).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
ds_kind(KEYS[1], 'latch')
local n = redis.call('HINCRBY', KEYS[1], 'n', -1)
if n > 0 then return n end
redis.call('DEL', KEYS[1])
ds_notify(KEYS[2], ARGV[1], '', ARGV[2])
redis.call('DEL', KEYS[2])
return 0
