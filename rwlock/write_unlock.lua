-- The full path of write_unlockfast.lua (its keys, arguments and reply).
local now = rw_prune(KEYS[1], KEYS[2])
local r = rw_release(KEYS[1], KEYS[2], KEYS[5], 'w:' .. ARGV[1], ARGV[2], now, ARGV[5])
if r == 1 then rw_hand_on(KEYS[1], KEYS[2], KEYS[6], KEYS[3], KEYS[4], KEYS[7], ARGV[3], ARGV[4], now, ARGV[6], ARGV[7], string.match(ARGV[1], '^[^:]*')) end
return r
