-- The full path of permit_acquirefast.lua (its arguments and reply).
local now = sem_prune()
local ids = {}
for id in string.gmatch(ARGV[3], '%S+') do ids[#ids + 1] = id end
local n = #ids
if redis.call('ZSCORE', KEYS[2], ids[1]) then
  local exp = now + tonumber(ARGV[4])
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[2], 'GT', exp, id) end
  return {1, 0}
end
if ds_finished(KEYS[5], ids[1]) then return {-2, 0} end
local v = sem_avail()
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local window = tonumber(ARGV[6])
if v >= n then
  local exp = now + tonumber(ARGV[4])
  sem_add(-n)
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[2], exp, id) end
  ds_unwait(KEYS[3], ARGV[5])
  if v == n then
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
local retry, told = -1, math.floor(window / 2)
if first[2] then
  retry = tonumber(first[2]) - now
  told = retry
end
sem_wait(ARGV[5], tostring(n), told, ARGV[6])
if not sem_exists then return {-4, retry} end
return {0, retry}
