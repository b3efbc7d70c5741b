-- A candidate's attempt to lead: one campaign, by its acquisition id, of an
-- owner of its own. Granted when nobody leads and the candidate is the head
-- of the queue, or nobody queues, once heads whose process died are passed
-- over (dsq_head, the queue library).
-- KEYS[1] H  KEYS[2] Q  KEYS[3] D (see queue.lua)  KEYS[4] the term counter (Core.FenceKey)
-- KEYS[5] the finished campaigns  KEYS[6] the last term (Observe's
-- "nobody leads" state: the term counter is shared by many names), which
-- expires ARGV[10] ms after the leader's lease, extended with it
-- KEYS[7] V: a queued candidate's value, for a resignation that grants it
-- the leadership (queue.lua)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] candidate id ('' on the first
-- attempt, which queues nobody)  ARGV[4] candidate window ms
-- ARGV[5] acquisition id  ARGV[6] mode
-- ARGV[7] value  ARGV[8] the change channel  ARGV[9] publish command
-- ARGV[10] ms to remember the last term after the leadership ends  ARGV[11] the wake-up channel
-- ARGV[12] the hand-off lease ms
-- Reply: {term, 1} when it leads, or led already (a repeated attempt: its
--        lease is renewed from now);
--        {0, ms after which to try again, server ms} when refused; a
--        queued candidate must try again by then to keep its place;
--        {-2, 0} when the campaign was given up before.
ds_kind(KEYS[1], 'election')
local now = dsq_prune(KEYS[2], KEYS[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if ds_finished(KEYS[5], ARGV[5]) then return {-2, 0} end
  local n = ds_enter(KEYS[1], ARGV[1], ARGV[5], ARGV[6], ARGV[2], now, true)
  ds_extend(KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[6], tonumber(ARGV[2]) + tonumber(ARGV[10]))
  return {tonumber(redis.call('HGET', KEYS[1], '#t')), n}
end
local head = redis.call('LINDEX', KEYS[2], 0)
local vacant = redis.call('EXISTS', KEYS[1]) == 0
if vacant and head and head ~= ARGV[3] then
  -- Another candidate heads the queue of a free leadership: one whose
  -- process died is passed over, with every candidate of its Client
  -- (dsq_head; this candidate's Client is alive).
  head = dsq_head(KEYS[2], KEYS[3], ARGV[11], ARGV[9], string.match(ARGV[1], '^[^:]*'), head, KEYS[7])
end
if vacant and (not head or head == ARGV[3]) then
  if ds_finished(KEYS[5], ARGV[5]) then return {-2, 0} end
  dsq_granted(KEYS[2], KEYS[3], head)
  if head then redis.call('HDEL', KEYS[7], head) end
  local term, s = ds_token(KEYS[4], ds_clock())
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'election',
    '#a:' .. ARGV[1], ARGV[5] .. '=' .. ds_end(now, ARGV[6], ARGV[2]),
    '#v', ARGV[7], '#s', ds_int(now))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[6], 't', s) -- a hash: the ACL recipe has HGET, not GET
  redis.call('PEXPIRE', KEYS[6], tonumber(ARGV[2]) + tonumber(ARGV[10]))
  redis.call(ARGV[9], ARGV[8], 'c')
  return {term, 1}
end
if vacant then
  -- Nobody leads, yet another candidate heads the queue: the leadership
  -- lapsed (the leader's lease ran out, its process died) without a
  -- resignation, which would have handed it on. The head is woken as a
  -- resignation would wake it (dsq_wake), once: its window is cut to the
  -- hand-off lease, so one that vanished is dropped then, and this refusal
  -- names that end as its retry time (dsq_refuse).
  dsq_wake(KEYS[2], KEYS[3], ARGV[11], ARGV[9], ARGV[12], true)
end
local r = dsq_refuse(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[4], now)
if ARGV[3] ~= '' then
  -- Its value, for a grant; kept as long as the queue.
  redis.call('HSET', KEYS[7], ARGV[3], ARGV[7])
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[7], ttl) end
end
r[3] = now -- for a grant that follows (acquire.Lock.Handoff)
return r
