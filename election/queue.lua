-- Helpers of the election's scripts, placed after the shared library and
-- before each script's body.
--
-- An election is, under one hash tag:
--   H  the leader's hash, which exists while someone leads and expires with
--      the leader's lease: the lock hold's fields (owner -> 1, '#a:'..owner
--      its acquisition, '#t' the term, '#k' 'election'), '#v' the value the
--      leader announced and '#s' the server ms since when it leads
--   Q  a list of candidate ids in arrival order, the head first
--   D  a sorted set: candidate id -> the end of its wait window (server ms);
--      a candidate pushes it further at every attempt, and one whose window
--      ended (its process died, it paused) is dropped wherever it stands
-- and two channels: one that wakes the head candidate ('w:<id>'), one that
-- tells observers and leaders that the state changed ('c').

local function el_int(x)
  return string.format('%d', x)
end

-- Keep Q and D as long as the last window; delete both when nobody waits.
local function el_expire(q, d, now)
  local last = redis.call('ZRANGE', d, -1, -1, 'WITHSCORES')
  if #last == 0 then
    redis.call('DEL', q, d)
    return
  end
  local ttl = el_int(tonumber(last[2]) - now)
  redis.call('PEXPIRE', q, ttl)
  redis.call('PEXPIRE', d, ttl)
end

-- Drop the candidates whose window ended. Returns the server time in ms.
local function el_prune(q, d)
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', d, '-inf', el_int(now))
  if #gone > 0 then
    for _, id in ipairs(gone) do redis.call('LREM', q, 1, id) end
    redis.call('ZREMRANGEBYSCORE', d, '-inf', el_int(now))
    el_expire(q, d, now)
  end
  return now
end

-- Wake the head candidate, only it, and nudge the one after it (the
-- notifier's 'w:<head> <next>'); the head must come back within hl ms: its
-- window is cut to that, and then it is dropped, so that the next one,
-- which bounds its sleep by hl, finds itself the head. A head that vanished
-- delays the election by at most hl. When nobody queues, wake every
-- candidate of the election ('v'): one whose entry vanished while it waited
-- (a pause past its window) tries again at once instead of at the lease it
-- was told.
local function el_wake(q, d, wake, pub, hl)
  local two = redis.call('LRANGE', q, 0, 1)
  if #two == 0 then
    redis.call(pub, wake, 'v')
    return
  end
  redis.call('ZADD', d, 'XX', 'LT', el_int(ds_now_ms() + tonumber(hl)), two[1])
  redis.call(pub, wake, 'w:' .. two[1] .. ' ' .. (two[2] or '-'))
end

-- Nobody leads any more: wake the head candidate and tell the observers.
local function el_vacant(q, d, wake, pub, hl, obs)
  el_wake(q, d, wake, pub, hl)
  redis.call(pub, obs, 'c')
end
