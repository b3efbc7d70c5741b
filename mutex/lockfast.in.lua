-- Acquire or re-enter the reentrant lock: one acquisition, by its id.
-- KEYS[1] the lock: a hash of owner -> hold count, '#t' -> fencing token,
--         '#a:'..owner -> the owner's ledger of acquisitions (lib.lua) and,
--         once a waiter may wait, '#q' (releases then look for them) -> the
--         server ms until which the waiters (Q, E) live at least, or 1 when
--         unknown (mx.lua)
-- KEYS[2] the fencing counter of the name's slot (Core.FenceKey)  KEYS[3] Q,
-- the waiters (mx.lua)  KEYS[4] the acquisition's finished mark (ds_mark)
-- KEYS[5] E, the waiters' entries (mx.lua), only when the caller waits: an
-- attempt that does not wait touches no entry
-- ARGV[1] owner  ARGV[2] lease ms  ARGV[3] acquisition id  ARGV[4] 'w' (the
-- watchdog renews it) or 'e'  ARGV[5] waiter window ms, only when the caller
-- waits (its waiter id, '<owner>:<acquisition id>' in mx.lua, is made here)
-- ARGV[6] 'l' when the waiter listens on its Client's channel (mx.lua)
-- Reply: {token, hold count} when acquired or re-entered, or when this
--        acquisition was granted before (a repeated attempt, or the
--        confirmation of a hand-off: it extends the lease to the full one);
--        {0, remaining lease ms (-1: no expiry), server ms} when another
--        owner holds it (a waiter is registered, see below);
--        {-2, 0} when the acquisition was released or given up before.
-- The key of another kind of primitive is refused (WRONGKIND).
--
-- The common cases come first, before the helpers are defined (a run that
-- returns in them pays nothing for them).
--
-- A waiter's attempt while another owner holds the lock, not finished
-- before: it registers in the waiters of mx.lua (Q, E; mx_wait, inlined)
-- and is refused. Its first registration keeps its place (to the
-- microsecond: two waiters that come within a millisecond stay in order);
-- its entry says when it will try again by itself (its end less the window:
-- a release that finds that late enough needs no nudge, mx.lua), with a
-- lock without expiry counted as half a window. The lock is marked as
-- waited for ('#q'): its release then hands it on (unlockfast.lua). Q and E
-- expire together, never earlier than a registration's end: '#q' says until
-- when they live at least, so that a registration within that needs no PTTL
-- nor PEXPIRE; one beyond it extends them by a window more than it needs
-- (once a window, not once a registration) and notes the new end in '#q'.
local v -- what a waiter read of the lock: {its hold count, '#k', '#q'}
if ARGV[5] then
  v = redis.call('HMGET', KEYS[1], ARGV[1], '#k', '#q')
  if v[2] == 'mutex' and not v[1] and redis.call('EXISTS', KEYS[4]) == 0 then
    local t = redis.call('TIME')
    local now = ds_ms(t)
    local ttl = redis.call('PTTL', KEYS[1])
    mx_wait(KEYS[1], KEYS[3], KEYS[5], ARGV[1] .. ':' .. ARGV[3], ttl, ARGV[5], ARGV[3], ARGV[4] .. (ARGV[6] or ''), ARGV[2], v[3], t, now)
    return {0, ttl, now}
  end
end
-- An attempt on a free lock that nobody waits for (so the caller is not
-- registered as a waiter either), by an acquisition not finished before.
-- One EXISTS covers the lock, the finished mark and the waiters; then the
-- token, the HSET and PEXPIRE of the hold. Anything else goes on to the
-- full path below the helpers. A waiter (ARGV[5] set) asks first whether
-- another owner holds the lock (see above), and only when the lock is not
-- there goes on to this case.
if not (v and v[2]) and redis.call('EXISTS', KEYS[1], KEYS[4], KEYS[3]) == 0 then
  local t = redis.call('TIME')
  local tok, s = ds_token(KEYS[2], t)
  local e = 'w'
  if ARGV[4] ~= 'w' then e = ds_int(ds_ms(t) + tonumber(ARGV[2])) end
  -- (the count '1' is a string: the server formats a number argument with %.17g)
  redis.call('HSET', KEYS[1], ARGV[1], '1', '#t', s, '#k', 'mutex', '#a:' .. ARGV[1], ARGV[3] .. '=' .. e)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tok, 1}
end
