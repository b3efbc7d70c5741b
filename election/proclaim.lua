-- The leader announces a new value, in the same term, and the observers are
-- told.
-- KEYS[1] H  ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] value
-- ARGV[4] the change channel  ARGV[5] publish command
-- Reply: 1 announced, 0 the acquisition does not lead.
ds_kind(KEYS[1], 'election')
for _, id in ipairs(ds_ledger(KEYS[1], ARGV[1])) do
  if id == ARGV[2] then
    redis.call('HSET', KEYS[1], '#v', ARGV[3])
    redis.call(ARGV[5], ARGV[4], 'c')
    return 1
  end
end
return 0
