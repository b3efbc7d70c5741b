-- The latch's count (changes nothing).
-- KEYS[1] the latch (see await.lua)
-- Reply: the count; 0 when the latch is open.
ds_kind(KEYS[1], 'latch')
return tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
