-- The FIFO queue of waiters that a fair lock and an election keep beside
-- their hash (QueueLib): placed after the shared library and before the
-- primitive's own helpers and body. The keys come as arguments, so each
-- primitive keeps its own names; under the primitive's hash tag:
--   h  the primitive's hash, which exists while someone holds it
--   q  a list of waiter ids in arrival order, the head first
--   d  a sorted set: waiter id -> the end of its wait window, ms on the
--      server clock; a waiter pushes it further at every attempt
-- A waiter whose window ended (its process died, it paused) is dropped
-- wherever it stands, so it cannot block the queue.

-- Keep q and d until the last window ends; delete both when nobody waits.
local function dsq_expire(q, d, now)
  local last = redis.call('ZRANGE', d, -1, -1, 'WITHSCORES')
  if #last == 0 then
    redis.call('DEL', q, d)
    return
  end
  local ttl = ds_int(tonumber(last[2]) - now)
  redis.call('PEXPIRE', q, ttl)
  redis.call('PEXPIRE', d, ttl)
end

-- Remove the waiters of the list gone from q: one LREM each when few,
-- else q is written anew with the others, in their order and with its
-- expiry, so that removing many costs one pass over q, not one each.
local function dsq_remove(q, gone)
  if #gone <= 16 then
    for _, id in ipairs(gone) do redis.call('LREM', q, 1, id) end
    return
  end
  local out, keep = {}, {}
  for _, id in ipairs(gone) do out[id] = true end
  for _, id in ipairs(redis.call('LRANGE', q, 0, -1)) do
    if not out[id] then keep[#keep + 1] = id end
  end
  local ttl = redis.call('PTTL', q)
  redis.call('DEL', q)
  ds_calls('RPUSH', q, keep)
  if ttl > 0 and #keep > 0 then redis.call('PEXPIRE', q, ttl) end
end

-- Forget every waiter of Client cid in q (and d) that listens (its id ends
-- in 'l': it listens on a channel of its Client's own, channel .. ':' ..
-- cid), when cid no longer listens there (ds_listening): none of them can be
-- told. With all, those of every Client that no longer listens too, but
-- live's (nil: none; ds_of_deaf). Returns the waiters forgotten.
local function dsq_forget(q, d, cid, all, pub, channel, live)
  local gone = {}
  for _, id in ipairs(ds_of_deaf(redis.call('LRANGE', q, 0, -1), cid, all, pub, channel, live and {[live] = true})) do
    if string.sub(id, -1) == 'l' then gone[#gone + 1] = id end
  end
  dsq_remove(q, gone)
  ds_calls('ZREM', d, gone)
  return gone
end

-- The head of q (false when nobody queues), once every head that listens
-- whose Client no longer does (its process died: ds_listening on channel ..
-- ':' .. <client id>) left q, with every waiter of its Client that listens
-- (dsq_forget; from the second such Client on, of every Client that no
-- longer listens), and their fields in the hash v (nil: none; the
-- election's values): a grant or a wake-up to it would only lapse, one
-- hand-off lease a dead head. live (nil: none) is the id of a Client known
-- to be alive (the caller's own), whose waiters need no asking. head is the
-- head the caller read (false: nobody queues). After 64 dead Clients the
-- head is taken as it is.
local function dsq_head(q, d, channel, pub, live, head, v)
  local deaf_before
  for _ = 1, 64 do
    if not head or string.sub(head, -1) ~= 'l' then return head end
    local cid = string.match(head, '^[^:]*')
    if cid == live or ds_listening(pub, channel, cid) then return head end
    local gone = dsq_forget(q, d, cid, deaf_before, pub, channel, live)
    if v then ds_calls('HDEL', v, gone) end
    deaf_before = true
    head = redis.call('LINDEX', q, 0)
  end
  return head
end

-- Drop the waiters whose window ended. Returns the server time in ms.
local function dsq_prune(q, d)
  local now = ds_now_ms()
  local gone = redis.call('ZRANGEBYSCORE', d, '-inf', ds_int(now))
  if #gone > 0 then
    dsq_remove(q, gone)
    redis.call('ZREMRANGEBYSCORE', d, '-inf', ds_int(now))
    dsq_expire(q, d, now)
  end
  return now
end

-- The caller was granted h; head is the head of q (false when q is empty),
-- which the caller is when there is one: it leaves q. The expiry of q and d
-- stays: it covers every window left (a waiter leaving never needs a later
-- one), and both go with their last member.
local function dsq_granted(q, d, head)
  if head then
    redis.call('LPOP', q)
    redis.call('ZREM', d, head)
  end
end

-- The caller was refused h (held, or another waiter's turn). Waiter id
-- ('' for a caller that will not wait: it is never queued) joins the tail,
-- or keeps its place, and its window ends window ms after h's lease.
-- Returns the refusal {0, ms after which to try again}: when the lease ends,
-- at the latest half a window from now (the window itself is the slack),
-- and no later than the earliest window end, when a vanished waiter ahead
-- may be dropped; a lease in its last millisecond (PTTL 0) ends now: at once.
-- A queued waiter must try again by then to keep its place. q and d are
-- extended when they would end before the new window, by a window more
-- than it needs (so once a window, not at every attempt), never shortened.
local function dsq_refuse(h, q, d, id, window, now)
  local pttl = redis.call('PTTL', h)
  local ttl = math.max(pttl, 0)
  window = tonumber(window)
  if id ~= '' then
    if redis.call('ZADD', d, ds_int(now + ttl + window), id) == 1 then
      redis.call('RPUSH', q, id)
    end
    if redis.call('PTTL', d) < ttl + window then
      redis.call('PEXPIRE', q, ttl + 2 * window)
      redis.call('PEXPIRE', d, ttl + 2 * window)
    end
  end
  local retry = ttl
  if pttl < 0 then retry = math.floor(window / 2) end
  local first = redis.call('ZRANGE', d, 0, 0, 'WITHSCORES')
  if #first > 0 then retry = math.min(retry, tonumber(first[2]) - now) end
  return {0, math.max(retry, 1)}
end

-- The waiters after the head in three, the first three of q: '<second>',
-- '<second>,<third>' (both nudged, the third in case the second vanished
-- too), or '-' when none (the notifier's <next>).
local function dsq_next(three)
  if #three < 2 then return '-' end
  return table.concat(three, ',', 2)
end

-- Wake the head of q, and only it, and nudge the two waiters after it (the
-- notifier's 'w:<head> <next>' payload, dsq_next, by the publish command
-- pub on channel; with each, where every Client's waiters listen on a
-- channel of their own, on the head's Client's, and 'w:- <next>' on those
-- of the others next names: ds_tell). The head must come back within hl
-- ms: its window is cut to that, and then it is dropped, so that the next
-- one, which bounds its sleep by hl, finds itself the head. A head that
-- vanished delays the queue by at most hl, and two in a row about 2 hl:
-- the third, nudged too, finds the second at the head of a free lock and
-- wakes it in turn. The caller checks that h is free. With once, the head
-- is woken only when this call cut its window (an earlier wake cut it
-- already otherwise). Returns 1 when it published, 0 when it did not
-- (nobody queues, or once and woken before).
local function dsq_wake(q, d, channel, pub, hl, once, each)
  local three = redis.call('LRANGE', q, 0, 2)
  if #three == 0 then return 0 end
  local cut = redis.call('ZADD', d, 'XX', 'LT', 'CH', ds_int(ds_now_ms() + tonumber(hl)), three[1])
  if once and cut == 0 then return 0 end
  local next = dsq_next(three)
  if each then
    ds_tell(pub, channel, three[1], next, 'w:' .. three[1] .. ' ' .. next)
  else
    redis.call(pub, channel, 'w:' .. three[1] .. ' ' .. next)
  end
  return 1
end

-- Waiter id leaves q and d (both pruned). Returns 1 when id was queued, 0
-- when it was not; then whether it was the head of q while h is free (the
-- caller then hands h on to the new head, as a release would: fl_handon,
-- el_handon, which pass over a head whose process died); then the server
-- time in ms.
local function dsq_leave(h, q, d, id)
  local head = redis.call('LINDEX', q, 0)
  local was = redis.call('LREM', q, 1, id)
  redis.call('ZREM', d, id)
  local now = dsq_prune(q, d)
  dsq_expire(q, d, now)
  return was, head == id and redis.call('EXISTS', h) == 0, now
end
