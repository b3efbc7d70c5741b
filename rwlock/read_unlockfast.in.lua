-- Release one read acquisition, by its id. When that frees the lock, it is
-- granted to a waiting writer, or to the waiting readers (rw_hand_on).
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the acquisition's finished mark (ds_mark)
-- KEYS[6] the fencing counter (Core.FenceKey)  KEYS[7] the writers' queue (rw.lua)
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel prefix (rw_hand)
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- ARGV[6] the hand-off lease ms  ARGV[7] '1' when waiting writers go first
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
--
-- The common case comes first, before the helpers are defined: the owner's
-- only read acquisition is released, its hold's lease has not ended, and
-- nobody waits (nobody to hand the lock to). The hold goes; the keys go with the last
-- hold, or keep their expiry (at most the longest lease that was left).
if redis.call('EXISTS', KEYS[3], KEYS[4]) == 0 then
  local m = 'r:' .. ARGV[1]
  local e = redis.call('ZSCORE', KEYS[2], m)
  local t = redis.call('TIME')
  if e and tonumber(e) > ds_ms(t) and dsf_only(redis.call('HGET', KEYS[1], '#a:' .. m), ARGV[2]) then
    redis.call('HDEL', KEYS[1], m, 't:' .. m, '#a:' .. m)
    redis.call('ZREM', KEYS[2], m)
    if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
    redis.call('SET', KEYS[5], '1', 'PX', ARGV[5])
    return 1
  end
end
