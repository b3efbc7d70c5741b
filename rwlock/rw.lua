-- Helpers of the read-write lock's scripts, placed after the shared library
-- and before each script's body.
--
-- A read-write lock is two keys under its name's hash tag:
--   H a hash: '#w' -> the owner holding the write lock; for each hold m,
--     'w:<owner>' (the write hold) or 'r:<owner>' (a read hold):
--     m -> hold count, 't:'..m -> fencing token, '#a:'..m -> the hold's
--     ledger of acquisitions (lib.lua)
--   L a sorted set: hold m -> the end of its lease, ms on the server clock:
--     the longest promise made to a live acquisition of m
-- Each hold has its own lease, so a crashed reader's hold ends alone. Every
-- script first drops the holds whose lease ended (rw_prune); both keys live
-- until the last lease ends and are deleted when no hold is left.

-- Forget hold m in H (not in L).
local function rw_drop(h, m)
  redis.call('HDEL', h, m, 't:' .. m, '#a:' .. m)
  if string.sub(m, 1, 2) == 'w:' then redis.call('HDEL', h, '#w') end
end

-- Drop the holds whose lease ended. Returns the server time (ms) and how
-- many holds are left.
local function rw_prune(h, l)
  ds_kind(h, 'rwlock')
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', l, '-inf', ds_int(now))
  if #gone > 0 then
    for _, m in ipairs(gone) do rw_drop(h, m) end
    redis.call('ZREMRANGEBYSCORE', l, '-inf', ds_int(now))
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
  redis.call('PEXPIRE', h, ds_int(ttl))
  redis.call('PEXPIRE', l, ds_int(ttl))
end

-- Grant acquisition id (mode 'w' or 'e') of hold m with a lease of lease
-- ms from now (a new hold gets a fencing token); a repeated attempt of an
-- acquisition granted before renews its lease from now, as a new grant's
-- would be, so the caller may count it from that attempt's send. The
-- hold's lease is never shortened. Returns {token, hold count}.
local function rw_grant(h, l, m, now, lease, fence, id, mode)
  local n, new = ds_enter(h, m, id, mode, lease, now, true)
  local tok
  if n == 1 and new then
    local s
    tok, s = ds_token(fence, ds_clock())
    redis.call('HSET', h, 't:' .. m, s, '#k', 'rwlock')
  else
    tok = tonumber(redis.call('HGET', h, 't:' .. m))
  end
  local e = now + tonumber(lease)
  local cur = redis.call('ZSCORE', l, m)
  if not cur or tonumber(cur) < e then
    redis.call('ZADD', l, ds_int(e), m)
    rw_expire(h, l, now)
  end
  return {tok, n}
end

-- Release acquisition id of hold m, d its finished mark (see ds_release
-- and ds_release_mark for the reply). When the
-- hold ends it is dropped; when it goes on with no acquisition the watchdog
-- renews, its lease falls to the latest explicit end left.
local function rw_release(h, l, d, m, id, now, life)
  local r, watch, last = ds_release_mark(h, d, m, id, life, nil, '1')
  if r == 1 then
    rw_drop(h, m)
    redis.call('ZREM', l, m)
    rw_expire(h, l, now)
  elseif r == 0 and not watch then
    redis.call('ZADD', l, ds_int(last), m)
    rw_expire(h, l, now)
  end
  return r
end

-- Wake one waiting writer, the one whose registration ends last (the
-- likeliest alive), and nudge the one before it ('w:<id> <next>', see
-- internal/notify). The woken writer must come back within hl ms: its
-- registration is cut to that, and the nudged one, which bounds its sleep
-- by hl, tries by then. A writer that vanished delays the others by at most
-- hl. Returns whether a writer was woken.
local function rw_wake_writer(wwait, channel, pub, now, hl)
  redis.call('ZREMRANGEBYSCORE', wwait, '-inf', ds_int(now))
  local two = redis.call('ZRANGE', wwait, -2, -1)
  if #two == 0 then return false end
  local id, next = two[#two], '-'
  if #two == 2 then next = two[1] end
  redis.call('ZADD', wwait, 'XX', 'LT', ds_int(now + tonumber(hl)), id)
  redis.call(pub, channel, 'w:' .. id .. ' ' .. next)
  return true
end

-- Publish '' (wake every waiter) when either waiter set has a live member.
local function rw_wake_all(rwait, wwait, channel, pub)
  if ds_notify(rwait, channel, '', pub) == 0 then
    ds_notify(wwait, channel, '', pub)
  end
end
