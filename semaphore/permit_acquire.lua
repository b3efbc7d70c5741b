-- Take one permit of the permit semaphore under a new permit id (the
-- acquisition id) with a lease, once per id.
-- ARGV[3] permit id  ARGV[4] lease ms  ARGV[5] waiter id ('' when the caller
-- will not wait)  ARGV[6] waiter window ms
-- Reply: {1, 0} granted (now, or by an earlier attempt of the id);
-- {0, ms} refused (the waiter is registered), with the ms until the earliest
-- held permit's lease ends, when trying again may succeed, or -1 when no
-- permit is held; {-2, 0} the id was released or given up before.
local now = sem_prune()
if redis.call('ZSCORE', KEYS[2], ARGV[3]) then return {1, 0} end
if ds_finished(KEYS[5], ARGV[3]) then return {-2, 0} end
local v = sem_avail()
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local window = tonumber(ARGV[6])
if v >= 1 then
  local exp = now + tonumber(ARGV[4])
  redis.call('DECR', KEYS[1])
  redis.call('ZADD', KEYS[2], exp, ARGV[3])
  ds_unwait(KEYS[3], ARGV[5])
  if v == 1 then
    -- The waiters sleep until the time they were told (their score less
    -- the window); if this lease ends before the earliest of them wakes,
    -- wake one to learn it, so that a crashed holder's permit is reclaimed
    -- when its lease ends.
    local w = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    if #w > 0 and exp < tonumber(w[2]) - window then
      ds_notify(KEYS[3], ARGV[1], 'n:1', ARGV[2])
    end
  end
  return {1, 0}
end
-- A waiter told that no permit is held sleeps half a window.
local retry = math.floor(window / 2)
local told = retry
if first[2] then
  retry = tonumber(first[2]) - now
  told = retry
else
  retry = -1
end
sem_wait(ARGV[5], '1', told, ARGV[6])
return {0, retry}
