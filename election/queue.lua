-- Helpers of the election's scripts, placed after the shared library and the
-- queue of waiters (internal/core/queue.lua, whose h, q and d are H, Q and
-- D below) and before each script's body.
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
--   V  a hash: candidate id -> the value it will announce, for a grant
-- and two channels: one that wakes or grants the head candidate ('w:<id>',
-- 'g:<id> ...'), one that tells observers and leaders that the state
-- changed ('c'). A candidate id is '<owner>:<acquisition id>:<mode><lease
-- ms>[l]' (acquire.Lock.ModeInWaiter): what a grant needs; 'l' when the
-- candidate's Client listens, while it waits, on a channel of its own
-- beside the wake-up channel, '<wake-up channel>:<client id>', where nothing
-- is published (acquire.Lock.Presence): a subscription that tells whether
-- its process lives (dsq_head).

-- Nobody leads any more: wake the head candidate (dsq_wake) and tell the
-- observers. When nobody queues, wake every candidate of the election
-- instead ('v'): one whose entry vanished while it waited (a pause past its
-- window) tries again at once instead of at the lease it was told.
local function el_vacant(q, d, wake, pub, hl, obs)
  if dsq_wake(q, d, wake, pub, hl) == 0 then redis.call(pub, wake, 'v') end
  redis.call(pub, obs, 'c')
end

-- Nobody leads any more (H deleted, the queue pruned; now ms): grant the
-- leadership to the head candidate (dsq_head: one whose process died is
-- passed over; live as there), as the fair lock's release does
-- (fl_handon): a new hold for its campaign with a fresh term from the
-- counter fence, the value it campaigns with (from V), a lease of at most
-- hl ms until its Client renews it, the last term (last, kept lastms after
-- that lease; lastms when nobody is granted it), and
-- 'g:<id> <acquisition id> <term> <now> <next>' on wake: it leads when the
-- message arrives, and the two candidates after it (dsq_next), nudged,
-- bound their sleep by hl in case the head vanished (its grant then lapses
-- and the next one campaigns for the free leadership, or, when it vanished
-- too, the third wakes it: campaign.lua). Observers are told. A head whose id
-- says nothing of its campaign is woken instead (el_vacant).
local function el_handon(h, q, d, v, fence, last, lastms, wake, pub, hl, obs, now, live)
  local three = redis.call('LRANGE', q, 0, 2)
  if dsq_head(q, d, wake, pub, live, three[1] or false, v) ~= (three[1] or false) then
    three = redis.call('LRANGE', q, 0, 2)
  end
  local id = three[1]
  local owner, acq, mode, lease
  if id then owner, acq, mode, lease = string.match(id, '^(.*):([^:]+):([we])(%d+)l?$') end
  if not owner then
    redis.call('PEXPIRE', last, lastms) -- nobody leads: the last term is kept briefly
    return el_vacant(q, d, wake, pub, hl, obs)
  end
  dsq_granted(q, d, id, now)
  local value = redis.call('HGET', v, id) or ''
  redis.call('HDEL', v, id)
  local _, s = ds_token(fence, ds_clock())
  local ttl, e = ds_handed(hl, mode, lease, now)
  redis.call('HSET', h, owner, 1, '#t', s, '#k', 'election', '#a:' .. owner, acq .. '=' .. e,
    '#v', value, '#s', ds_int(now))
  redis.call('PEXPIRE', h, ds_int(ttl))
  redis.call('HSET', last, 't', s)
  redis.call('PEXPIRE', last, ds_int(ttl + tonumber(lastms)))
  redis.call(pub, wake, 'g:' .. id .. ' ' .. acq .. ' ' .. s .. ' ' .. ds_int(now) .. ' ' .. dsq_next(three))
  redis.call(pub, obs, 'c')
end
