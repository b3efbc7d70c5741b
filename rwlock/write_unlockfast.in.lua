-- Release one write acquisition, by its id. When the write hold ends, the
-- lock is free, or a read lock if the owner still reads (a downgrade): it is
-- granted to the waiting readers, or to a waiting writer (rw_hand_on).
-- KEYS[1] H  KEYS[2] L  KEYS[3] the readers' waiter set  KEYS[4] the writers'
-- KEYS[5] the acquisition's finished mark (ds_mark)
-- KEYS[6] the fencing counter (Core.FenceKey)  KEYS[7] the writers' queue (rw.lua)
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] channel prefix (rw_hand)
-- ARGV[4] publish command (PUBLISH or SPUBLISH)  ARGV[5] ms to remember the release
-- ARGV[6] the hand-off lease ms  ARGV[7] '1' when waiting writers go first
-- Reply: see ds_release (lib.lua): 1, 0, 2 released; -1 not held.
--
-- The common case comes first, before the helpers are defined: the owner's
-- only write acquisition is released, its hold's lease has not ended, no
-- other hold is left (the owner reads none: no downgrade), and nobody waits.
if dsf_only(redis.call('HGET', KEYS[1], '#a:w:' .. ARGV[1]), ARGV[2])
    and redis.call('EXISTS', KEYS[3], KEYS[4]) == 0 then
  local l = redis.call('ZRANGE', KEYS[2], 0, 1, 'WITHSCORES')
  local t = redis.call('TIME')
  if #l == 2 and l[1] == 'w:' .. ARGV[1] and tonumber(l[2]) > ds_ms(t) then
    redis.call('DEL', KEYS[1], KEYS[2])
    redis.call('SET', KEYS[5], '1', 'PX', ARGV[5])
    return 1
  end
end
