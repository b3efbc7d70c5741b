-- Release one acquisition, by its id; when it was the owner's last, hand
-- the lock on (mx_next: delete it and wake the oldest waiter, or grant it to
-- that waiter once it has waited starve ms). When the owner still holds but
-- no acquisition left is renewed by the watchdog, the lease falls to the
-- latest explicit end left. A waiter that gives up runs it too (leave '1'):
-- its waiter entry goes, and a grant a release may have handed it meanwhile
-- is given back.
-- KEYS[1] the lock  KEYS[2] Q  KEYS[3] E  KEYS[4] the acquisition's
-- finished mark  KEYS[5] the fencing counter
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the
-- release  ARGV[6] starve ms  ARGV[7] hand-off lease ms
-- ARGV[8] fencing counter lifetime ms  ARGV[9] '1' when a waiter leaves
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
-- Uncontended (one acquisition, nobody waiting) it costs the HGET of the
-- ledger, the finished mark, one EXISTS and the DEL.
if ARGV[9] == '1' then mx_unwait(KEYS[2], KEYS[3], ARGV[1]) end
local r, watch, last = ds_release_mark(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[5])
if r == 1 then
  mx_next(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[8], ARGV[3], ARGV[4], ARGV[6], ARGV[7])
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], mx_int(last - ds_now_ms()))
end
return r
