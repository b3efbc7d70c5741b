-- Take n permits from the counting semaphore, once per acquisition id.
-- ARGV[3] n (1..2^53)  ARGV[4] waiter id ('' when the caller will not wait)
-- ARGV[5] waiter window ms  ARGV[6] acquisition id  ARGV[7] ms to remember
-- that it took them (a repeated attempt must not take them again)
-- Reply: 1 taken (now, or by an earlier attempt of the acquisition); 0 fewer
-- than n are available (the waiter is registered on the channel of its
-- need), -4 likewise but the permits were never set; -2 the acquisition was
-- given up before.
local now = sem_prune()
if ds_finished(KEYS[5], ARGV[6]) then return -2 end
if ds_finished(KEYS[5], 'g:' .. ARGV[6]) then return 1 end
if sem_avail() >= tonumber(ARGV[3]) then
  sem_add('-' .. ARGV[3])
  ds_done(KEYS[5], 'g:' .. ARGV[6], now, ARGV[7])
  ds_unwait(KEYS[3], ARGV[4])
  return 1
end
sem_wait(ARGV[4], ARGV[3], 0, ARGV[5])
if not sem_exists then return -4 end
return 0
