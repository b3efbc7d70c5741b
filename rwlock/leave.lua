-- A waiter gives up (its context ended or its wait budget was spent): forget
-- it. A writer hands the lock on (rw_hand_on) when no writer holds it: it may
-- have held readers back (writer preference), or been the oldest writer of a
-- lock whose holds lapsed.
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the writers' queue (rw.lua)  KEYS[6] the fencing counter (Core.FenceKey)
-- ARGV[1] 'r' or 'w'  ARGV[2] waiter id  ARGV[3] channel prefix (rw_hand)
-- ARGV[4] publish command  ARGV[5] the hand-off lease ms
-- ARGV[6] '1' when waiting writers go first
-- Reply: 1 when the waiter was registered, else 0.
if ARGV[1] == 'r' then
  return redis.call('ZREM', KEYS[3], ARGV[2])
end
redis.call('ZREM', KEYS[5], ARGV[2])
if redis.call('ZREM', KEYS[4], ARGV[2]) == 0 then return 0 end
local now = rw_prune(KEYS[1], KEYS[2])
rw_hand_on(KEYS[1], KEYS[2], KEYS[6], KEYS[3], KEYS[4], KEYS[5], ARGV[3], ARGV[4], now, ARGV[5], ARGV[6], string.match(ARGV[2], '^[^:]*'))
return 1
