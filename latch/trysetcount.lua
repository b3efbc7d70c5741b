-- Set the latch's count if the latch is open (absent).
-- KEYS[1] the count  ARGV[1] count (1..2^53)
-- Reply: 1 set, 0 the latch was already counting down (nothing changed).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
