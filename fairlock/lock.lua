-- The full path of lockfast.lua (its keys, arguments and reply).
ds_kind(KEYS[1], 'fairlock')
local now = fl_prune(KEYS[2], KEYS[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if redis.call('EXISTS', KEYS[5]) == 1 then return {-2, 0} end
  if ARGV[3] ~= '' and redis.call('ZREM', KEYS[3], ARGV[3]) == 1 then
    -- A waiter whose owner got the lock meanwhile re-enters: it waits no more.
    redis.call('LREM', KEYS[2], 1, ARGV[3])
  end
  local n = ds_enter(KEYS[1], ARGV[1], ARGV[6], ARGV[7], ARGV[2], now, true)
  ds_extend(KEYS[1], ARGV[2])
  return {tonumber(redis.call('HGET', KEYS[1], '#t')), n}
end
local head = redis.call('LINDEX', KEYS[2], 0)
if redis.call('EXISTS', KEYS[1]) == 0 and (not head or head == ARGV[3]) then
  if redis.call('EXISTS', KEYS[5]) == 1 then return {-2, 0} end
  if head then
    redis.call('LPOP', KEYS[2])
    redis.call('ZREM', KEYS[3], head)
    fl_expire(KEYS[2], KEYS[3], now)
  end
  local tok, s = ds_token(KEYS[4], ARGV[5])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'fairlock', '#a:' .. ARGV[1], ARGV[6] .. '=' .. ds_end(now, ARGV[7], ARGV[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
local pttl = redis.call('PTTL', KEYS[1])
local ttl = math.max(pttl, 0)
local window = tonumber(ARGV[4])
if ARGV[3] ~= '' then
  -- Join the tail, or keep the place and push the window further.
  if redis.call('ZADD', KEYS[3], fl_int(now + ttl + window), ARGV[3]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[3])
  end
  fl_expire(KEYS[2], KEYS[3], now)
end
-- Try again when the lease ends, at the latest half a window from now (the
-- window itself is the slack), and no later than the earliest window end,
-- when a vanished waiter ahead may be dropped.
-- A lease in its last millisecond (PTTL 0) ends now: try again at once.
local retry = ttl
if pttl < 0 then retry = math.floor(window / 2) end
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if #first > 0 then retry = math.min(retry, tonumber(first[2]) - now) end
return {0, math.max(retry, 1)}
