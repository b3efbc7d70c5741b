-- Give up a counting acquisition whose outcome is unknown (its reply was
-- lost, or too few replicas acknowledged it): give back the n permits if it
-- took them, and record it finished so that an attempt still on the wire is
-- refused when it arrives. Applies once per acquisition id.
-- ARGV[3] n  ARGV[4] acquisition id  ARGV[5] ms to remember it
-- Reply: 1 permits given back, 0 none had been taken (or given back before).
local now = sem_prune()
if ds_finished(KEYS[5], ARGV[4]) then return 0 end
ds_done(KEYS[5], ARGV[4], now, ARGV[5])
if not ds_finished(KEYS[5], 'g:' .. ARGV[4]) then return 0 end
local n = tonumber(ARGV[3])
sem_give(sem_add(ARGV[3]), n)
return 1
