-- Delete the latch (it opens) and wake every awaiter.
-- KEYS[1] the latch (see await.lua)  KEYS[2] the waiter set
-- ARGV[1] channel  ARGV[2] publish command
-- Reply: 1 deleted, 0 it was open already.
ds_kind(KEYS[1], 'latch')
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
ds_notify(KEYS[2], ARGV[1], '', ARGV[2])
redis.call('DEL', KEYS[2])
return 1
