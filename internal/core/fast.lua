-- The few helpers a common case needs, for scripts whose common case runs
-- before the shared library is defined (NewFastScript): defining these
-- functions costs a fraction of defining the library's.

-- Server time in ms; t is a TIME reply, read when nil.
local function dsf_ms(t)
  t = t or redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Next fencing token of a name (as ds_token), with t a TIME reply: as a
-- number and as the string to store.
local function dsf_token(key, t)
  local tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local s = string.format('%.0f', tok)
  local last = redis.call('SET', key, s, 'GET')
  if last and tok <= tonumber(last) then
    tok = tonumber(last) + 1
    s = string.format('%.0f', tok)
    redis.call('SET', key, s)
  end
  return tok, s
end

-- The end entry of a new acquisition in a ledger (as ds_end): 'w' for mode
-- 'w', else now + lease ms, with t a TIME reply.
local function dsf_end(mode, lease, t)
  if mode == 'w' then return 'w' end
  return string.format('%d', dsf_ms(t) + tonumber(lease))
end

-- Whether ledger entry v is the single live acquisition id: '<id>=w', or
-- '<id>=<end>' with end still ahead (the server time is read then).
local function dsf_only(v, id)
  local n = #id
  if not v or string.sub(v, 1, n + 1) ~= id .. '=' then return false end
  local e = string.sub(v, n + 2)
  if e == 'w' then return true end
  return string.find(e, '^%d+$') ~= nil and tonumber(e) > dsf_ms()
end

-- Record id finished in the sorted set d until now + life ms (as ds_done).
local function dsf_done(d, id, now, life)
  redis.call('ZREMRANGEBYSCORE', d, '-inf', now)
  redis.call('ZADD', d, now + tonumber(life), id)
  if redis.call('PTTL', d) < tonumber(life) then redis.call('PEXPIRE', d, life) end
end
