-- Take every available permit.
-- Reply: how many were taken (0 when none was available; a negative count is
-- left as it is).
sem_prune()
local v = sem_avail()
if v <= 0 then return 0 end
sem_put(0)
return v
