-- The full path of the unlock script (unlockfast.lua), which read the
-- owner's ledger already (ul_ledger) unless a waiter leaves or a release by
-- id runs, and which released the lock already when the waiter it chose no
-- longer listens (ul_handon: the lock goes on to the next).
-- The Client of the owner that releases, or of the waiter that leaves, is
-- alive (mx_grant); that of a release by id may not be.
local live = (not ARGV[5] or ARGV[5] == 'l') and string.match(ARGV[1], '^[^:]*') or nil
if ul_handon then
  mx_next(KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[1] .. ':ch', ul_pub, ul_starve, ul_hl, ul_window, live)
  return 1
end
local by = ARGV[5]
if by == 'l' then
  mx_unwait(KEYS[2], KEYS[3], ARGV[1] .. ':' .. ARGV[2], KEYS[1])
  by = '1'
elseif not by then
  by = '1'
end
local r, watch, last = ds_release_mark(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ul_ledger, by)
if ARGV[6] and (r == 0 or r == 1) then ds_tell_taken(ARGV[6], {{ARGV[1], KEYS[1], ARGV[2]}}) end
if r == 1 then
  local starve, hl, window, pub = string.match(ARGV[4], '^(%d+) (%d+) (%d+) (%u+)$')
  mx_next(KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[1] .. ':ch', pub, starve, hl, window, live)
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], ds_int(last - ds_now_ms()))
end
return r
