-- Helpers of the read-write lock's scripts, placed after the shared library
-- and before each script's body.
--
-- A read-write lock is two keys under its name's hash tag:
--   H a hash: '#w' -> the owner holding the write lock; for each hold m,
--     'w:<owner>' (the write hold) or 'r:<owner>' (a read hold):
--     m -> hold count, 't:'..m -> fencing token, 'u:'..m -> id of the last
--     partial release (so a retried release is recognised)
--   L a sorted set: hold m -> the end of its lease, ms on the server clock
-- Each hold has its own lease, so a crashed reader's hold ends alone. Every
-- script first drops the holds whose lease ended (rw_prune); both keys live
-- until the last lease ends and are deleted when no hold is left.

local function rw_int(x)
  return string.format('%d', x)
end

-- Forget hold m in H (not in L).
local function rw_drop(h, m)
  redis.call('HDEL', h, m, 't:' .. m, 'u:' .. m)
  if string.sub(m, 1, 2) == 'w:' then redis.call('HDEL', h, '#w') end
end

-- Drop the holds whose lease ended. Returns the server time (ms) and how
-- many holds are left.
local function rw_prune(h, l)
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', l, '-inf', rw_int(now))
  if #gone > 0 then
    for _, m in ipairs(gone) do rw_drop(h, m) end
    redis.call('ZREMRANGEBYSCORE', l, '-inf', rw_int(now))
  end
  local live = redis.call('ZCARD', l)
  if live == 0 then redis.call('DEL', h) end
  return now, live
end

-- Ms until the last lease ends (0 when no hold is left).
local function rw_last(l, now)
  local last = redis.call('ZRANGE', l, -1, -1, 'WITHSCORES')
  if #last == 0 then return 0 end
  return tonumber(last[2]) - now
end

-- Keep both keys until the last lease ends; delete them when no hold is left.
local function rw_expire(h, l, now)
  local ttl = rw_last(l, now)
  if ttl <= 0 then
    redis.call('DEL', h, l)
    return
  end
  redis.call('PEXPIRE', h, rw_int(ttl))
  redis.call('PEXPIRE', l, rw_int(ttl))
end

-- Grant hold m once more (a new hold gets a fencing token) with a lease of
-- lease ms from now. Returns {token, hold count}.
local function rw_grant(h, l, m, now, lease, fence, fencettl)
  local n = redis.call('HINCRBY', h, m, 1)
  local tok
  if n == 1 then
    tok = ds_token(fence, fencettl)
    redis.call('HSET', h, 't:' .. m, string.format('%.0f', tok))
  else
    tok = tonumber(redis.call('HGET', h, 't:' .. m))
  end
  redis.call('ZADD', l, rw_int(now + tonumber(lease)), m)
  rw_expire(h, l, now)
  return {tok, n}
end

-- Release one hold count of m. Returns 1 when the hold is gone, 0 when a
-- count remains or request req was applied before, -1 when m is not held.
local function rw_release(h, l, m, req, now)
  local n = redis.call('HGET', h, m)
  if not n then return -1 end
  if redis.call('HGET', h, 'u:' .. m) == req then return 0 end
  n = tonumber(n) - 1
  if n > 0 then
    redis.call('HSET', h, m, n, 'u:' .. m, req)
    return 0
  end
  rw_drop(h, m)
  redis.call('ZREM', l, m)
  rw_expire(h, l, now)
  return 1
end

-- Publish '' (wake every waiter) when either waiter set has a live member.
local function rw_wake_all(rwait, wwait, channel, pub)
  if ds_notify(rwait, channel, '', pub) == 0 then
    ds_notify(wwait, channel, '', pub)
  end
end
