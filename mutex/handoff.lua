-- The common case of unlockfast.lua when waiters registered: the lock,
-- deleted there, goes to the oldest waiter (ul_grant), which leaves the
-- waiters. When that waiter's Client no longer listens (mx_grant; the
-- releaser's own Client is alive), the full path hands the lock on to the
-- next (ul_handon).
if ul_grant then
  local g, hl, ch = ul_grant, tonumber(ul_hl), KEYS[1] .. ':ch'
  redis.call('ZREM', KEYS[2], g[1])
  redis.call('HDEL', KEYS[3], g[1])
  if mx_grant(KEYS[1], KEYS[5], ch, ul_pub, hl, g[7], g[8], g[1], g[2], g[3], g[4], g[5],
      mx_next_of(ul_pub, ch, g[1], g[5], g[6], g[10], g[11], g[8], hl, ul_window), g[9], string.match(ARGV[1], '^[^:]*')) then
    return 1
  end
  ul_handon = true
end
