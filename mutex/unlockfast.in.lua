-- Release one acquisition, by its id; when it was the owner's last, hand
-- the lock on (mx_next: delete it and wake the oldest waiter, or grant it to
-- that waiter once it has waited starve ms). When the owner still holds but
-- no acquisition left is renewed by the watchdog, the lease falls to the
-- latest explicit end left. A waiter that gives up runs it too (ARGV[5] 'l'):
-- its waiter entry ('<owner>:<acquisition id>', mx.lua) goes, and a grant a
-- release may have handed it meanwhile is given back.
-- KEYS[1] the lock  KEYS[2] Q  KEYS[3] E  KEYS[4] the acquisition's
-- finished mark  KEYS[5] the fencing counter (Core.FenceKey)
-- ARGV[1] owner  ARGV[2] acquisition id  ARGV[3] ms to remember the release
-- ARGV[4] the Client's timing and publish command, '<starve ms> <hand-off
-- lease ms> <the waiters' window ms> <PUBLISH or SPUBLISH>' (timing in
-- mutex.go)  ARGV[5] who releases, when not the acquisition itself (which
-- sends no ARGV[5]): 'l' a waiter of it that leaves, else the token of one
-- release by id (ds_release_mark)  ARGV[6] for a release by id only: the
-- prefix of the Clients' control channels, where the holder is told
-- (ds_tell_taken)
-- Waiters are told on the lock's channel, KEYS[1] .. ':ch', and the
-- Client's id (mx.lua): a channel, not a key, so it is made here.
-- Reply: see ds_release (lib.lua): 1, 0, 2 released (2: by this releaser,
-- before); -1 not held (by another releaser's release, too).
--
-- The common case comes first, before the helpers are defined: the
-- owner's only acquisition is released and no waiter ever registered while
-- the lock lived (no '#q' in the lock: lockfast.lua). One HMGET of the
-- ledger and the flag, the DEL and the finished mark (TIME too for an
-- explicit lease, to check that it has not ended). When waiters registered,
-- the same, and the oldest waiter is granted the lock (handoff.lua, after
-- the few helpers it needs) when it is live and its turn has come: one
-- ZRANGE of the three oldest, one HMGET of their entries. Anything else (a
-- waiter to drop, one young enough to wake only, another acquisition of
-- the owner left, a release by id) goes on to the full path below the
-- helpers, which has changed nothing yet.
local ul_ledger -- the owner's ledger read here (false: none), for the full path
local ul_starve, ul_hl, ul_window, ul_pub -- ARGV[4], read where waiters need it
local ul_handon -- the lock, released, is to be handed on by the full path (handoff.lua)
local ul_grant  -- the oldest waiter to grant the lock to (handoff.lua): {id, entry fields, next, its entry, TIME, ms, the lock's '#q', the waiter after next, its entry}
if not ARGV[5] then
  local v = redis.call('HMGET', KEYS[1], '#a:' .. ARGV[1], '#q')
  ul_ledger = v[1]
  local e -- the end of the acquisition when it is the owner's only one
  if v[1] == ARGV[2] .. '=w' then
    e = 'w'
  elseif v[1] and string.sub(v[1], 1, #ARGV[2] + 1) == ARGV[2] .. '=' then
    e = string.sub(v[1], #ARGV[2] + 2)
  end
  if e then
    local live, t = e == 'w', nil
    if not live and string.find(e, '^%d+$') then
      t = redis.call('TIME')
      live = tonumber(e) > ds_ms(t)
    end
    if live and v[2] then
      local two = redis.call('ZRANGE', KEYS[2], 0, 2, 'WITHSCORES')
      ul_starve, ul_hl, ul_window, ul_pub = string.match(ARGV[4], '^(%d+) (%d+) (%d+) (%u+)$')
      if #two > 0 then
        t = t or redis.call('TIME')
        local now = ds_ms(t)
        local after, third = two[3] or '-', two[5] or '-'
        local es = redis.call('HMGET', KEYS[3], two[1], after, third)
        local fend, acq, mode, lease, woken = string.match(es[1] or '', '^(%S+) (%S+) (%S+) (%S+) ?(%S*)$')
        if fend and tonumber(fend) > now and woken == '' and ds_us(t) - tonumber(two[2]) >= tonumber(ul_starve) * 1000 then
          ul_grant = {two[1], acq, mode, lease, after, es[2], t, now, v[2], third, es[3]}
        else
          live = false
        end
      end
    end
    if live then
      redis.call('DEL', KEYS[1])
      redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
      if not ul_grant then return 1 end
    end
  end
end
