-- The full path of unlockfast.lua (its keys, arguments and reply), which
-- read the owner's ledger already (fu_ledger).
return fl_release(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[5], ARGV[3], ARGV[4], ARGV[6], fu_ledger)
