-- Acquire or re-enter a read hold.
-- KEYS[1] H  KEYS[2] L (see rw.lua)  KEYS[3] the fencing counter (Core.FenceKey)
-- KEYS[4] the readers' waiter set  KEYS[5] the writers' waiter set
-- KEYS[6] the acquisition's finished mark (ds_mark)  KEYS[7] the writers' queue (rw.lua)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('' when the caller will
-- not wait)  ARGV[4] waiter window ms
-- ARGV[5] acquisition id  ARGV[6] 'w' (the watchdog renews it) or 'e'
-- ARGV[7] '1' when waiting writers go first (writer preference)
-- ARGV[8] the hand-off lease ms (unused)
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt);
--        {-2, 0} when the acquisition was released or given up before;
--        {0, ms after which trying again may succeed, server ms} when
--        refused: another owner holds the write lock, or (writer preference)
--        a writer waits; the waiter is registered, and a release may grant
--        it the lock directly (rw_hand_on in rw.lua).
--
-- The common case comes first, before the helpers are defined: a new read
-- hold of the owner, asked for by a caller that will not wait, while no
-- writer holds the lock (nor, with writer preference, waits), by an
-- acquisition not finished before. Other readers may hold: both keys then
-- live at least this lease (until the last lease ends). Anything else (a
-- re-entry, a writer's hold even if its lease ended, another kind's key)
-- goes on to the full path.
if ARGV[3] == '' then
  local m = 'r:' .. ARGV[1]
  local v = redis.call('HMGET', KEYS[1], '#w', '#a:' .. m, '#k')
  local busy
  if ARGV[7] == '1' then
    busy = redis.call('EXISTS', KEYS[6], KEYS[5])
  else
    busy = redis.call('EXISTS', KEYS[6])
  end
  if not v[1] and not v[2] and (not v[3] or v[3] == 'rwlock') and busy == 0 then
    local t = redis.call('TIME')
    local tok, s = ds_token(KEYS[3], t)
    redis.call('HSET', KEYS[1], m, 1, 't:' .. m, s, '#a:' .. m, ARGV[5] .. '=' .. dsf_end(ARGV[6], ARGV[2], t), '#k', 'rwlock')
    redis.call('ZADD', KEYS[2], ds_int(ds_ms(t) + tonumber(ARGV[2])), m)
    local lease = tonumber(ARGV[2])
    for i = 1, 2 do
      if redis.call('PTTL', KEYS[i]) < lease then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
    end
    return {tok, 1}
  end
end
