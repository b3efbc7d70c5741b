-- Return a permit to the pool and wake a waiter, once per permit id.
-- ARGV[3] permit id  ARGV[4] ms to remember the release  ARGV[5] '' for
-- the holder's own release; for a release by id from elsewhere, the prefix
-- of the control channels, where the holder is told (ds_tell_taken), and
-- 'x:'..id is finished too: the release was not the holder's
-- Reply (as ds_release): 1 released; 2 released before by the holder (a
-- retried release whose first reply was lost); -1 not held: unknown, its
-- lease ended (it went back to the pool then, once), or released by id
-- from elsewhere; the id is then finished, so that an acquisition of it
-- still on the wire is refused when it arrives.
--
-- The common cases come first, before the helpers are defined: a permit
-- whose lease has not ended goes back, and nobody waits (no waiter
-- queued: nobody to grant it to); or, while waiters queue, none available
-- (not fewer: a count set below the held permits must not grant)
-- and no other held lease ended (sem_prune would return it), it goes
-- straight to the oldest waiter when that one waits for one permit, its
-- window has not ended and, when it listens, its Client still does (not
-- asked when it is the releaser's: sem_pgrant's ds_listening, sem_phold
-- and sem_ptell, inlined: the count stays).
if ARGV[5] == '' then
  local waited = redis.call('EXISTS', KEYS[4]) == 1
  local t = redis.call('TIME')
  local now = ds_ms(t)
  local e = redis.call('ZSCORE', KEYS[2], ARGV[3])
  local v = e and tonumber(e) > now and redis.call('HMGET', KEYS[1], '#k', '#x', 'n')
  if v and v[1] == ARGV[#ARGV] and not waited then
    redis.call('ZREM', KEYS[2], ARGV[3])
    ds_done(KEYS[5], ARGV[3], now, ARGV[4])
    redis.call('HINCRBY', KEYS[1], 'n', 1)
    if v[2] then redis.call('PEXPIRE', KEYS[1], v[2]) end -- its idle time to live (sem_used)
    return 1
  end
  local first = v and v[1] == ARGV[#ARGV] and tonumber(v[3] or '0') == 0 and redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local three = first and tonumber(first[2]) > now and redis.call('ZRANGE', KEYS[3], 0, 2)
  local fend, lease, l, ids -- the oldest waiter's entry, ids its one permit id
  if three and three[1] then
    fend, lease, l, ids = string.match(redis.call('HGET', KEYS[4], three[1]) or '', '^(%d+) (%d+)(l?) (%S+)$')
  end
  local live = fend and tonumber(fend) > now
  local cid = live and string.match(three[1], '^[^:]*')
  if live and l ~= '' and cid ~= string.match(ARGV[3], '^[^:]*') then live = ds_listening(ARGV[2], ARGV[1], cid) end
  if live then
    redis.call('ZREM', KEYS[2], ARGV[3])
    ds_done(KEYS[5], ARGV[3], now, ARGV[4])
    if v[2] then redis.call('PEXPIRE', KEYS[1], v[2]) end -- its idle time to live (sem_used)
    sem_phold(ids, lease, now)
    sem_ptell(three[1], three[2] or '-', three[3] or '-', now)
    return 1
  end
end
