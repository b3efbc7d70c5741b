-- Check whether the latch is open: absent (never set, counted down to zero,
-- deleted) or at zero or below.
-- KEYS[1] the latch: a hash, '#k' -> 'latch', 'n' -> the count
-- KEYS[2] the waiter set
-- ARGV[1] waiter id ('' when the caller will not wait)  ARGV[2] waiter window ms
-- Reply: 1 open; 0 closed (the waiter is registered).
ds_kind(KEYS[1], 'latch')
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
if n <= 0 then
  ds_unwait(KEYS[2], ARGV[1])
  return 1
end
ds_wait(KEYS[2], ARGV[1], -1, ARGV[2])
return 0
