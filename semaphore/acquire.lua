-- Take n permits from the counting semaphore.
-- ARGV[3] n (1..2^53)  ARGV[4] waiter id ('' when the caller will not wait)
-- ARGV[5] waiter window ms
-- Reply: 1 taken; 0 fewer than n are available (the waiter is registered on
-- the channel of its need).
sem_prune()
if sem_avail() >= tonumber(ARGV[3]) then
  redis.call('DECRBY', KEYS[1], ARGV[3])
  ds_unwait(KEYS[3], ARGV[4])
  return 1
end
sem_wait(ARGV[4], ARGV[3], 0, ARGV[5])
return 0
