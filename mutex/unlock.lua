-- Release one hold count of the owner; delete the lock and wake one waiter
-- per subscribed process when it was the last (only one can take it; a woken
-- waiter that fails waits for the next release).
-- KEYS[1] the lock  KEYS[2] the waiter set
-- ARGV[1] owner  ARGV[2] release request id (the same on a retried release)
-- ARGV[3] channel  ARGV[4] publish command (PUBLISH or SPUBLISH)
-- Reply: 1 released (the lock is free), 0 still held by the owner (a hold
-- count remains, or this request was applied before), -1 not held by the owner.
local r = ds_release(KEYS[1], ARGV[1], ARGV[2])
if r == 1 then ds_notify(KEYS[2], ARGV[3], 'n:1', ARGV[4]) end
return r
