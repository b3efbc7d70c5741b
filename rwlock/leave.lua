-- A waiter gives up (its context ended or its wait budget was spent): forget
-- it. A writer that was the last one waiting wakes the readers it was
-- holding back (writer preference), unless a writer holds the lock.
-- KEYS[1] H  KEYS[2] the readers' waiter set  KEYS[3] the writers'
-- KEYS[4] the writers' queue (rw.lua)
-- ARGV[1] 'r' or 'w'  ARGV[2] waiter id  ARGV[3] channel  ARGV[4] publish command
-- Reply: 1 when readers were woken, else 0.
if ARGV[1] == 'r' then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 0
end
redis.call('ZREM', KEYS[4], ARGV[2])
if redis.call('ZREM', KEYS[3], ARGV[2]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ds_int(ds_now_ms()))
if redis.call('ZCARD', KEYS[3]) > 0 or redis.call('HEXISTS', KEYS[1], '#w') == 1 then return 0 end
return ds_notify(KEYS[2], ARGV[3], '', ARGV[4])
