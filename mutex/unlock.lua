-- The full path of the unlock script (unlockfast.lua), which read the
-- owner's ledger already (ul_ledger) unless a waiter leaves.
if ARGV[9] == '1' then mx_unwait(KEYS[2], KEYS[3], ARGV[1] .. ':' .. ARGV[2], KEYS[1]) end
local r, watch, last = ds_release_mark(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[5], ul_ledger, ARGV[10])
if ARGV[11] ~= '' and (r == 0 or r == 1) then ds_tell_taken(ARGV[11], {{ARGV[1], KEYS[1], ARGV[2]}}) end
if r == 1 then
  mx_next(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[3], ARGV[4], ARGV[6], ARGV[7], ARGV[12])
elseif r == 0 and not watch then
  redis.call('PEXPIRE', KEYS[1], ds_int(last - ds_now_ms()))
end
return r
