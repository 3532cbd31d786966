-- schedule_record_fire.lua: record what the leader did with a schedule,
-- fenced by the leader's epoch.
--
-- KEYS[1]  <prefix>:{sched}:leader    leader lease hash
-- KEYS[2]  <prefix>:{sched}:s:<name>  schedule hash
-- KEYS[3]  <prefix>:{sched}:due       due zset
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  name
-- ARGV[3]  leader epoch
-- ARGV[4]  schedule version the leader acted on
-- ARGV[5]  next instant in ms, or "" for none
-- ARGV[6]  last instant fired in ms, or "" when none was fired
-- ARGV[7]  run id of the last instant fired
--
-- Transition: when the lease is held under the epoch and unexpired: next
-- (and the due zset) is set when the version is still the hash's; last and
-- run are set when given. Otherwise nothing changes.
--
-- Returns {code, then the hash's fields and values, flat}: code OK
-- recorded, NOT_FOUND no such schedule, STALE stale epoch.
--
-- Retried: records the same values again; the state is the same.
-- Lost data: a lost leader hash holds no epoch, so every record answers
-- STALE until a leader acquires again; a lost schedule hash answers
-- NOT_FOUND and nothing is written, so a fire never brings back a
-- schedule the leader read before the loss. A due zset that lost the name
-- gets it back with the next instant (ZADD).
-- Out of memory: the function is declared allow-oom and runs whole: it
-- only overwrites fields of a hash and a member of a zset that exist, so a
-- full Redis does not stop schedules from moving on. On the EVALSHA path
-- Redis refuses its first write and nothing changes.
-- Cut off: a leader cut off records nothing; once its lease runs out the
-- next leader takes it with the next epoch and finds each schedule's next
-- and last as they were last recorded, and the old leader's late records
-- answer STALE and change nothing.

local now = now_ms(ARGV[1])
local epoch = redis.call('HGET', KEYS[1], 'epoch')
local until_ms = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if epoch ~= ARGV[3] or until_ms <= now then return {STALE} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {NOT_FOUND} end
local name = ARGV[2]
if redis.call('HGET', KEYS[2], 'ver') == ARGV[4] then
  if ARGV[5] == '' then
    redis.call('HDEL', KEYS[2], 'next')
    redis.call('ZREM', KEYS[3], name)
  else
    redis.call('HSET', KEYS[2], 'next', ARGV[5])
    redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), name)
  end
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], 'last', ARGV[6], 'run', ARGV[7])
end
local out = {OK}
for _, v in ipairs(redis.call('HGETALL', KEYS[2])) do out[#out + 1] = v end
return out
