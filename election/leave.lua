-- A candidate gives up (its context ended, its wait was spent): remove it
-- from the queue and its window; if it was the head and nobody leads, wake
-- the new head.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] candidate id  ARGV[2] the wake-up channel  ARGV[3] publish command
-- ARGV[4] hand-off ms (see el_wake)
-- Reply: 1 when the candidate was queued, 0 when it was not.
local head = redis.call('LINDEX', KEYS[2], 0)
local was = redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local now = el_prune(KEYS[2], KEYS[3])
el_expire(KEYS[2], KEYS[3], now)
if head == ARGV[1] and redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 1 then
  el_wake(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4])
end
return was
