-- Acquire or re-enter the fair lock: one acquisition, by its id. Granted
-- when nobody holds it and the caller is the head of the queue, or the
-- queue is empty.
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D (see fair.lua)  KEYS[4] the fencing counter
-- KEYS[5] the finished acquisitions
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller
-- will not wait: it is then never queued)  ARGV[4] waiter window ms
-- ARGV[5] fencing counter lifetime ms  ARGV[6] acquisition id
-- ARGV[7] 'w' (the watchdog renews it) or 'e' (an explicit lease)
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt: its lease is
--        then renewed from now, as a new grant's would be, so the caller
--        may count it from this attempt's send);
--        {0, ms after which to try again} when refused; a queued waiter must
--        try again by then to keep its place;
--        {-2, 0} when the acquisition was released or given up before.
-- A re-entry never shortens the lease (see the mutex).
ds_kind(KEYS[1], 'fairlock')
local now = fl_prune(KEYS[2], KEYS[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if ds_finished(KEYS[5], ARGV[6]) then return {-2, 0} end
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
  if ds_finished(KEYS[5], ARGV[6]) then return {-2, 0} end
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
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
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
local retry = ttl
if retry == 0 then retry = math.floor(window / 2) end
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if #first > 0 then retry = math.min(retry, tonumber(first[2]) - now) end
return {0, math.max(retry, 1)}
