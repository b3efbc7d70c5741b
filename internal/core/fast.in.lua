-- The few helpers a common case needs, for scripts whose common case runs
-- before the shared library is defined (NewFastScript): defining these
-- functions costs a fraction of defining the library's. lib.lua's ds_ms,
-- ds_int and ds_token are inlined where they are called (inline.go).

-- The end entry of a new acquisition in a ledger (as ds_end): 'w' for mode
-- 'w', else now + lease ms, with t a TIME reply.
local function dsf_end(mode, lease, t)
  if mode == 'w' then return 'w' end
  return ds_int(ds_ms(t) + tonumber(lease))
end

-- Whether ledger entry v is the single live acquisition id: '<id>=w', or
-- '<id>=<end>' with end still ahead (the server time is read then).
local function dsf_only(v, id)
  local n = #id
  if not v or string.sub(v, 1, n + 1) ~= id .. '=' then return false end
  local e = string.sub(v, n + 2)
  if e == 'w' then return true end
  local t = redis.call('TIME')
  return string.find(e, '^%d+$') ~= nil and tonumber(e) > ds_ms(t)
end
