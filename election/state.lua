-- Who leads (Leader, Observe). Changes nothing.
-- KEYS[1] H  KEYS[2] the last term (campaign.lua)
-- Reply: {'1', term, value, since ms, ms left of the lease} while someone
--        leads; {'0', the last leader's term ('0': none, or forgotten a
--        minute after that leadership ended)}
--        when nobody does.
ds_kind(KEYS[1], 'election')
local f = redis.call('HMGET', KEYS[1], '#t', '#v', '#s')
if not f[1] then return {'0', redis.call('HGET', KEYS[2], 't') or '0'} end
return {'1', f[1], f[2] or '', f[3] or '0', tostring(redis.call('PTTL', KEYS[1]))}
