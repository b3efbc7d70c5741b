-- Helpers of the fair lock's scripts, placed after the shared library and
-- before each script's body.
--
-- A fair lock is the mutex's hash H (owner -> hold count, '#t' -> fencing
-- token, '#a:'..owner -> the owner's ledger of acquisitions) and, under the same hash
-- tag, its waiters:
--   Q a list of waiter ids in arrival order, the head first
--   D a sorted set: waiter id -> the end of its wait window, ms on the
--     server clock; a waiter pushes it further at every attempt
-- A waiter whose window ended (its process died while queued) is dropped
-- wherever it stands, so it cannot block the queue.

local function fl_int(x)
  return string.format('%d', x)
end

-- Keep Q and D until the last window ends; delete both when nobody waits.
local function fl_expire(q, d, now)
  local last = redis.call('ZRANGE', d, -1, -1, 'WITHSCORES')
  if #last == 0 then
    redis.call('DEL', q, d)
    return
  end
  local ttl = fl_int(tonumber(last[2]) - now)
  redis.call('PEXPIRE', q, ttl)
  redis.call('PEXPIRE', d, ttl)
end

-- Drop the waiters whose window ended. Returns the server time in ms.
local function fl_prune(q, d)
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', d, '-inf', fl_int(now))
  if #gone > 0 then
    for _, id in ipairs(gone) do redis.call('LREM', q, 1, id) end
    redis.call('ZREMRANGEBYSCORE', d, '-inf', fl_int(now))
    fl_expire(q, d, now)
  end
  return now
end

-- When the lock is free, wake the head of the queue, and only it, and nudge
-- the waiter after it (the notifier's 'w:<head> <next>' payload). The head
-- must come back within hl ms: its window is cut to that, and then it is
-- dropped, so that the next one, which bounds its sleep by hl, finds itself
-- the head. A head that vanished delays the queue by at most hl. Returns 1
-- when it published.
local function fl_wake_head(h, q, d, channel, pub, hl)
  if redis.call('EXISTS', h) == 1 then return 0 end
  local two = redis.call('LRANGE', q, 0, 1)
  if #two == 0 then return 0 end
  redis.call('ZADD', d, 'XX', 'LT', fl_int(ds_now_ms() + tonumber(hl)), two[1])
  redis.call(pub, channel, 'w:' .. two[1] .. ' ' .. (two[2] or '-'))
  return 1
end
