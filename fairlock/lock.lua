-- The full path of lockfast.lua (its keys, arguments and reply).
--
-- A fair lock is the mutex's hash H (owner -> hold count, '#t' -> fencing
-- token, '#a:'..owner -> the owner's ledger of acquisitions) and, under the
-- same hash tag, its waiters: the queue Q and their window ends D
-- (internal/core/queue.lua).
-- One HMGET reads the caller's hold count, the kind marker, which every
-- hold writes (without it, nobody holds the lock), and the token.
local v = redis.call('HMGET', KEYS[1], ARGV[1], '#k', '#t')
if v[2] and v[2] ~= 'fairlock' then ds_kind(KEYS[1], 'fairlock') end
local now = dsq_prune(KEYS[2], KEYS[3])
if v[1] then
  if redis.call('EXISTS', KEYS[5]) == 1 then return {-2, 0} end
  if ARGV[3] ~= '' and redis.call('ZREM', KEYS[3], ARGV[3]) == 1 then
    -- A waiter whose owner got the lock meanwhile re-enters: it waits no more.
    redis.call('LREM', KEYS[2], 1, ARGV[3])
  end
  local n = ds_enter(KEYS[1], ARGV[1], ARGV[5], ARGV[6], ARGV[2], now, true)
  ds_extend(KEYS[1], ARGV[2])
  return {tonumber(v[3]), n}
end
local head = redis.call('LINDEX', KEYS[2], 0)
if not v[2] and head and head ~= ARGV[3] then
  -- Another waiter heads the queue of a free lock: one whose process died
  -- is passed over, with every waiter of its Client (dsq_head; this
  -- caller's Client is alive).
  head = dsq_head(KEYS[2], KEYS[3], ARGV[7], ARGV[8], string.match(ARGV[1], '^[^:]*'), head)
end
if not v[2] and (not head or head == ARGV[3]) then
  if redis.call('EXISTS', KEYS[5]) == 1 then return {-2, 0} end
  dsq_granted(KEYS[2], KEYS[3], head)
  local tok, s = ds_token(KEYS[4], ds_clock())
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'fairlock', '#a:' .. ARGV[1], ARGV[5] .. '=' .. ds_end(now, ARGV[6], ARGV[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
if not v[2] then
  -- Nobody holds the lock, yet another waiter heads the queue: the last
  -- hold lapsed (its lease ran out, its holder died) without a release,
  -- which would have handed the lock on. The head is woken as a release
  -- would wake it (dsq_wake), once: its window is cut to the hand-off
  -- lease, so one that vanished is dropped then, and this refusal names
  -- that end as its retry time (dsq_refuse).
  dsq_wake(KEYS[2], KEYS[3], ARGV[7], ARGV[8], ARGV[9], true, true)
end
local r = dsq_refuse(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[4], now)
r[3] = now -- for a grant that follows (acquire.Lock.Handoff)
return r
