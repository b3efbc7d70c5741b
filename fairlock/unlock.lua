-- Release one hold count of the owner; when it was the last, delete the lock
-- and wake the head of the queue (one message, to that waiter only).
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D
-- ARGV[1] owner  ARGV[2] release request id (the same on a retried release)
-- ARGV[3] channel  ARGV[4] publish command (PUBLISH or SPUBLISH)
-- Reply: 1 released (the lock is free), 0 still held by the owner (a hold
-- count remains, or this request was applied before), -1 not held by the owner.
local r = ds_release(KEYS[1], ARGV[1], ARGV[2])
if r == 1 then
  fl_prune(KEYS[2], KEYS[3])
  fl_wake_head(KEYS[1], KEYS[2], ARGV[3], ARGV[4])
end
return r
