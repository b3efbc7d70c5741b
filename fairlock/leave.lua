-- A waiter gives up (its context ended or its wait budget was spent): remove
-- it from the queue and its window, and if it was the head of the queue and
-- the lock is free, hand the lock on to the new head as a release would
-- (fl_handon: a head whose process died is passed over). A grant a release
-- handed it meanwhile is given back first, as Unlock would (fl_release),
-- and its acquisition marked finished.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D  KEYS[4] the acquisition's finished mark
-- KEYS[5] the fencing counter
-- ARGV[1] waiter id (fl.lua)  ARGV[2] channel  ARGV[3] publish command
-- ARGV[4] the hand-off lease ms  ARGV[5] ms to remember the release
-- Reply: 1 when the waiter was queued, 0 when it was not.
local owner, acq = string.match(ARGV[1], '^(.*):([^:]+):[we]%d+l?$')
if owner and redis.call('HEXISTS', KEYS[1], owner) == 1 then
  fl_release(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], owner, acq, ARGV[5], ARGV[2], ARGV[3], ARGV[4])
end
local was, vacant, now = dsq_leave(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
if vacant then
  fl_handon(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[2], ARGV[3], ARGV[4], now, string.match(ARGV[1], '^[^:]*'))
end
return was
