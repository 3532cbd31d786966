-- ready_peek.lua: report whether a claim on these queues would find work
-- (a ready entry, or a delayed entry that is due). Read-only.
--
-- KEYS[5(i-1)+1]       <prefix>:{s}:z:<queue i>          delayed zset
-- KEYS[5(i-1)+2..+5]   <prefix>:{s}:q:<queue i>:3 .. :0  ready lists
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
--
-- Returns 1 when work may be there, 0 otherwise. A stale ready entry (a
-- cancelled task) may answer 1: a spurious wake-up, which the contract allows.

local now = now_ms(ARGV[1])
for i = 1, #KEYS, 5 do
  if #redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', now, 'LIMIT', 0, 1) > 0 then return 1 end
  for j = 1, 4 do
    if redis.call('LLEN', KEYS[i + j]) > 0 then return 1 end
  end
end
return 0
