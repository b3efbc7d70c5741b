-- The full path of permit_acquirefast.lua (its arguments and reply).
local now = sem_prune()
sem_pgrant() -- the queue first: a waiter whose turn it is may be this one
local ids = {}
for id in string.gmatch(ARGV[3], '%S+') do ids[#ids + 1] = id end
local n = #ids
if redis.call('ZSCORE', KEYS[2], ids[1]) then
  local exp = now + tonumber(ARGV[4])
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[2], 'GT', exp, id) end
  sem_punwait(ARGV[5])
  return {1, 0}
end
if ds_finished(KEYS[5], ids[1]) then return {-2, 0} end
local v = sem_avail()
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local window = tonumber(ARGV[6])
-- Nobody queued can use the permits (sem_pgrant): a waiter that needs
-- fewer than the oldest takes them, as a caller that does not wait does.
if v >= n then
  local exp = now + tonumber(ARGV[4])
  sem_add(-n)
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[2], exp, id) end
  sem_punwait(ARGV[5])
  if v == n then
    -- The waiters sleep until the time they were told (the end of their
    -- window less the window); if this lease ends before the oldest of
    -- them wakes, wake it to learn it, so that a crashed holder's permit
    -- is reclaimed when its lease ends.
    local w = redis.call('ZRANGE', KEYS[3], 0, 0)
    local fend = #w > 0 and string.match(redis.call('HGET', KEYS[4], w[1]) or '', '^(%d+)')
    if fend and exp < tonumber(fend) - window then
      ds_tell(ARGV[2], ARGV[1], w[1], '-', 'w:' .. w[1] .. ' -')
    end
  end
  return {1, 0}
end
local retry = sem_pwait(ARGV[5], ARGV[3], ARGV[4], ARGV[7], window, first, ds_clock(), now)
if not sem_exists then return {-4, retry, now} end
return {0, retry, now}
