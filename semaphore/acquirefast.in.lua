-- Take n permits from the counting semaphore, once per acquisition id.
-- ARGV[3] n (1..2^53)  ARGV[4] waiter id ('' when the caller will not wait)
-- ARGV[5] waiter window ms  ARGV[6] acquisition id  ARGV[7] ms to remember
-- that it took them (a repeated attempt must not take them again)
-- Reply: 1 taken (now, or by an earlier attempt of the acquisition); 0 fewer
-- than n are available (the waiter is registered on the channel of its
-- need), -4 likewise but the permits were never set; -2 the acquisition was
-- given up before.
--
-- The common cases come first, before the helpers are defined: an
-- acquisition neither finished nor taken before, on a semaphore whose
-- permits were set, takes permits that are available (a waiter, woken by a
-- release, leaves the waiter set), or is refused, a waiter being
-- registered (sem_wait, inlined). The counting semaphore holds no
-- leases (KEYS[2] stays empty), so the full path's sem_prune would change
-- nothing. Anything else (a name of another kind or never set, a finished
-- acquisition) goes on to the full path.
local v = redis.call('HMGET', KEYS[1], 'n', '#k', '#x')
if v[2] == ARGV[#ARGV] and not redis.call('ZSCORE', KEYS[5], ARGV[6])
    and not redis.call('ZSCORE', KEYS[5], 'g:' .. ARGV[6]) then
  local t = redis.call('TIME')
  if tonumber(v[1] or '0') >= tonumber(ARGV[3]) then
    redis.call('HINCRBY', KEYS[1], 'n', '-' .. ARGV[3])
    if v[3] then redis.call('PEXPIRE', KEYS[1], v[3]) end -- its idle time to live (sem_used)
    ds_done(KEYS[5], 'g:' .. ARGV[6], ds_ms(t), ARGV[7])
    if ARGV[4] ~= '' then redis.call('ZREM', KEYS[3], ARGV[4]) end
    return 1
  end
  sem_wait(ARGV[4], ARGV[3], ARGV[5], ds_ms(t))
  return 0
end
