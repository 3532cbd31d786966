-- leader_release.lua: give the leader lease up.
--
-- KEYS[1]  <prefix>:{sched}:leader  leader lease hash
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  holder
-- ARGV[3]  epoch
--
-- Transition: held by ARGV[2] under ARGV[3] and unexpired: until = 0, so
-- the next acquire takes it at once with the next epoch. Otherwise nothing.
--
-- Returns 1 released, 0 not held.
--
-- Retried: the lease is no longer held; answers 0 and changes nothing.
-- Lost data: a lost lease hash has nothing to release: the call answers 0
-- and writes nothing, and the next acquire takes the lease with epoch 1.
-- Out of memory: the function is declared allow-oom and runs whole (it
-- overwrites one field). On the EVALSHA path Redis refuses the HSET, and
-- the lease expires by itself.
-- Cut off: a holder cut off cannot release: its lease runs out TTL after
-- its last renewal, and another process takes it then instead of at once.

local now = now_ms(ARGV[1])
local until_ms = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[2] or redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[3] or until_ms <= now then
  return 0
end
redis.call('HSET', KEYS[1], 'until', '0')
return 1
