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
-- and two channels: one that wakes the head candidate ('w:<id>'), one that
-- tells observers and leaders that the state changed ('c').

-- Nobody leads any more: wake the head candidate (dsq_wake) and tell the
-- observers. When nobody queues, wake every candidate of the election
-- instead ('v'): one whose entry vanished while it waited (a pause past its
-- window) tries again at once instead of at the lease it was told.
local function el_vacant(q, d, wake, pub, hl, obs)
  if dsq_wake(q, d, wake, pub, hl) == 0 then redis.call(pub, wake, 'v') end
  redis.call(pub, obs, 'c')
end
