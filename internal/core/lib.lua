-- distsync's shared Lua helpers. Every script is this library followed by the
-- script's own body, so the helpers live in one place. Time is always the
-- server's (TIME); nothing here trusts a client clock.

-- Server time in milliseconds.
local function ds_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Next fencing token of a name, as a number and as the string to store. The
-- counter key lives ttl ms after its last use; when it is absent the sequence
-- continues from the server clock in microseconds, so tokens keep increasing
-- across idle periods without a key that lives forever. One SET ... GET in the
-- common case (the clock moved on since the last token).
local function ds_token(key, ttl)
  local t = redis.call('TIME')
  local tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local s = string.format('%.0f', tok)
  local last = redis.call('SET', key, s, 'PX', ttl, 'GET')
  if last and tok <= tonumber(last) then
    tok = tonumber(last) + 1
    s = string.format('%.0f', tok)
    redis.call('SET', key, s, 'PX', ttl)
  end
  return tok, s
end

-- Register a waiter (id ~= '') in the waiter set until now + ttl + window ms,
-- so releases know someone may be waiting. ttl is the remaining lease the
-- waiter was told (may be negative: unknown).
local function ds_wait(key, id, ttl, window)
  if id == '' then return end
  if ttl < 0 then ttl = 0 end
  local span = ttl + tonumber(window)
  redis.call('ZADD', key, ds_now_ms() + span, id)
  if redis.call('PTTL', key) < span then redis.call('PEXPIRE', key, span) end
end

-- Forget a waiter that got what it waited for.
local function ds_unwait(key, id)
  if id ~= '' then redis.call('ZREM', key, id) end
end

-- Publish msg on channel when a waiter may be waiting: the waiter set, pruned
-- of waiters whose window ended, is not empty. Returns 1 when published.
local function ds_notify(key, channel, msg, pub)
  if redis.call('EXISTS', key) == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ds_now_ms())
  if redis.call('ZCARD', key) == 0 then return 0 end
  redis.call(pub, channel, msg)
  return 1
end

-- Release one hold count of owner in the hash of holds at key, at most once
-- per release request id (a retry of an applied release is recognised by the
-- '#u' field). When it was the owner's last count the hash is deleted (an
-- exclusive lock's hash holds one owner). Returns 1 released, 0 a count
-- remains or this request was applied before, -1 the owner holds nothing.
local function ds_release(key, owner, reqid)
  local v = redis.call('HMGET', key, owner, '#u')
  if not v[1] then return -1 end
  if v[2] == reqid then return 0 end
  local n = tonumber(v[1]) - 1
  if n > 0 then
    redis.call('HSET', key, owner, n, '#u', reqid)
    return 0
  end
  redis.call('DEL', key)
  return 1
end

