-- Acquire or re-enter the reentrant lock: one acquisition, by its id.
-- KEYS[1] the lock: a hash of owner -> hold count, '#t' -> fencing token,
--         '#a:'..owner -> the owner's ledger of acquisitions (lib.lua) and,
--         once a waiter may wait, '#q' -> 1 (releases then look for them)
-- KEYS[2] the fencing counter of the name's slot (Core.FenceKey)  KEYS[3] Q and KEYS[4] E, the waiters
-- (mx.lua)  KEYS[5] the acquisition's finished mark (ds_mark)
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] waiter id ('<owner>:<acquisition
-- id>', mx.lua; '' when the caller will not wait)  ARGV[4] waiter window ms  ARGV[5] unused
-- ('': it was a lifetime of per-name fencing counters)
-- ARGV[6] acquisition id  ARGV[7] 'w' (the watchdog renews it) or 'e'
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt, or the
--        confirmation of a hand-off: it extends the lease to the full one);
--        {0, remaining lease ms (-1: no expiry), server ms} when another
--        owner holds it (a waiter is registered: mx_wait);
--        {-2, 0} when the acquisition was released or given up before.
-- The key of another kind of primitive is refused (WRONGKIND).
--
-- The common case comes first, before the helpers are defined (a run that
-- returns here pays nothing for them): a free lock that nobody waits for,
-- asked for by a caller not registered as a waiter, by an acquisition not
-- finished before. One EXISTS covers the lock, the finished mark and the
-- waiters; then the token, the HSET and PEXPIRE of the hold.
-- Anything else goes on to the full path below the helpers.
if ARGV[3] == '' and redis.call('EXISTS', KEYS[1], KEYS[5], KEYS[3]) == 0 then
  local t = redis.call('TIME')
  local tok, s = ds_token(KEYS[2], t)
  local e = 'w'
  if ARGV[7] ~= 'w' then e = ds_int(ds_ms(t) + tonumber(ARGV[2])) end
  redis.call('HSET', KEYS[1], ARGV[1], 1, '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[6] .. '=' .. e)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
