-- Set the latch's count if the latch is open (absent).
-- KEYS[1] the latch (see await.lua)  ARGV[1] count (1..2^53)
-- Reply: 1 set, 0 the latch was already counting down (nothing changed).
if redis.call('EXISTS', KEYS[1]) == 1 then
  ds_kind(KEYS[1], 'latch')
  return 0
end
redis.call('HSET', KEYS[1], '#k', 'latch', 'n', ARGV[1])
return 1
