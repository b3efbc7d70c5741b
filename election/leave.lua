-- A candidate gives up (its context ended, its wait was spent): a
-- leadership a resignation granted it meanwhile is given back first, as
-- Resign would (the next candidate is granted it); then it leaves the queue
-- and its window (and V), and if it was the head and nobody leads, the
-- leadership is handed on to the new head as a resignation would
-- (el_handon: a head whose process died is passed over).
-- KEYS as resign.lua's
-- ARGV[1] candidate id  ARGV[2] the wake-up channel  ARGV[3] publish command
-- ARGV[4] hand-off ms  ARGV[5] the change channel  ARGV[6] ms to remember
-- the release  ARGV[7] ms to remember the last term
-- Reply: 1 when the candidate was queued, 0 when it was not.
local owner, acq = string.match(ARGV[1], '^(.*):([^:]+):[we]%d+l?$')
redis.call('HDEL', KEYS[6], ARGV[1])
if owner and redis.call('HEXISTS', KEYS[1], owner) == 1 then
  local now = ds_now_ms()
  if ds_release(KEYS[1], KEYS[4], owner, acq, now, ARGV[6]) == 1 then
    redis.call('DEL', KEYS[1])
    dsq_prune(KEYS[2], KEYS[3])
    el_handon(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[5], KEYS[7], ARGV[7], ARGV[2], ARGV[3], ARGV[4], ARGV[5], now,
      string.match(owner, '^[^:]*'))
  end
end
local was, vacant, now = dsq_leave(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
if vacant and redis.call('EXISTS', KEYS[2]) == 1 then
  el_handon(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[5], KEYS[7], ARGV[7], ARGV[2], ARGV[3], ARGV[4], ARGV[5], now,
    string.match(ARGV[1], '^[^:]*'))
end
return was
