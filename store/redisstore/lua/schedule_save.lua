-- schedule_save.lua: create a schedule or replace its definition and next
-- instant.
--
-- KEYS[1]  <prefix>:{sched}:s:<name>  schedule hash
-- KEYS[2]  <prefix>:{sched}:due       due zset, score = next instant (ms)
-- KEYS[3]  <prefix>:{sched}:names     name zset, score 0, for listing by name
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  name
-- ARGV[3]  definition (opaque)
-- ARGV[4]  next instant in ms, or "" for none
--
-- Transition: the hash's def, next, ver (+1) and upd are set; last and run
-- are kept. The name is in the due zset exactly when next is set.
--
-- Returns the hash's fields and values, flat, as HGETALL.
--
-- Retried: saves again and bumps the version once more; the definition
-- and next instant are those given, so the state is the same.
-- Lost data: a schedule Redis lost is gone with its hash and its entries
-- in the due and name zsets; saving it again writes it anew, its version
-- counting from 1, with no last fire or run. A zset that lost the name
-- while the hash survived gets it back from the save (ZADD).
-- Out of memory: not allow-oom: on the function path Redis refuses the call
-- up front and nothing is written; on the EVALSHA path the first write,
-- the HSET, is refused, before anything changed.
-- Cut off: the call is atomic: a caller cut off mid-call saved whole or
-- not at all, and saving again (Retried) leaves the state it asked for.

local now = now_ms(ARGV[1])
local name, next_ms = ARGV[2], ARGV[4]
redis.call('HSET', KEYS[1], 'def', ARGV[3], 'upd', int(now))
redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('ZADD', KEYS[3], 0, name)
if next_ms == '' then
  redis.call('HDEL', KEYS[1], 'next')
  redis.call('ZREM', KEYS[2], name)
else
  redis.call('HSET', KEYS[1], 'next', next_ms)
  redis.call('ZADD', KEYS[2], tonumber(next_ms), name)
end
return redis.call('HGETALL', KEYS[1])
