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
-- The common case comes first, before the helpers are defined: a permit
-- whose lease has not ended goes back, and nobody waits (no need
-- registered: nobody to wake).
if ARGV[5] == '' and redis.call('EXISTS', KEYS[4]) == 0 then
  local t = redis.call('TIME')
  local now = ds_ms(t)
  local e = redis.call('ZSCORE', KEYS[2], ARGV[3])
  local v = e and tonumber(e) > now and redis.call('HMGET', KEYS[1], '#k', '#x')
  if v and v[1] == ARGV[#ARGV] then
    redis.call('ZREM', KEYS[2], ARGV[3])
    ds_done(KEYS[5], ARGV[3], now, ARGV[4])
    redis.call('HINCRBY', KEYS[1], 'n', 1)
    if v[2] then redis.call('PEXPIRE', KEYS[1], v[2]) end -- its idle time to live (sem_used)
    return 1
  end
end
