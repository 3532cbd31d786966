-- queue_pause.lua: pause a queue for every node, or resume it.
--
-- KEYS[1]  <prefix>:{nodes}:paused  paused queues (set)
-- KEYS[2]  <prefix>:{nodes}:ctl     control version (string)
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  queue
-- ARGV[3]  "1" to resume, "0" to pause
--
-- Transition: SADD (pause) or SREM (resume) of the queue; when that
-- changed the set, the control version goes up by one. A missing version
-- starts at now in ms times 1000, so a version Redis lost never comes back
-- with a value a node already knows for another set.
--
-- Returns {changed 1 or 0, control version}.
--
-- Retried: the second call finds the queue already in the state asked and
-- changes nothing.
-- Lost data: paused queues lost with the set are resumed; nodes learn it
-- at their next heartbeat, because the version they knew is gone too.
-- Out of memory: allow-oom: pausing is how an operator stops work coming
-- in; one set member and one counter.
-- Cut off: nodes that cannot reach Redis learn the change at their first
-- heartbeat that gets through.

local changed
if ARGV[3] == '1' then
  changed = redis.call('SREM', KEYS[1], ARGV[2])
else
  changed = redis.call('SADD', KEYS[1], ARGV[2])
end
local ver = redis.call('GET', KEYS[2])
if changed == 1 then
  if not ver then
    redis.call('SET', KEYS[2], int(now_ms(ARGV[1]) * 1000))
  end
  ver = redis.call('INCR', KEYS[2])
end
return {changed, tonumber(ver or '0')}
