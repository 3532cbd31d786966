-- node_drain.lua: tell a live node to drain.
--
-- KEYS[1]  <prefix>:{nodes}:n:<id>  node hash
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
--
-- Transition: when the hash exists and its exp is after now, drain = 1.
--
-- Returns OK, or NOT_FOUND when there is no live node.
--
-- Retried: sets the flag again; the same state.
-- Lost data: a request lost with the node's hash is not seen by the node;
-- the node registers again with its next heartbeat and the caller, who was
-- answered, must send the request again.
-- Out of memory: allow-oom: draining a node is how an operator gives
-- memory back; it writes one field of an existing hash.
-- Cut off: a node that cannot reach Redis learns the request at its first
-- heartbeat that gets through, if its record has not expired by then.

local now = now_ms(ARGV[1])
local exp = tonumber(redis.call('HGET', KEYS[1], 'exp') or '0')
if exp <= now then return NOT_FOUND end
redis.call('HSET', KEYS[1], 'drain', '1')
return OK
