-- node_heartbeat.lua: register a node or refresh its record, add its new
-- history, and answer its control flags.
--
-- KEYS[1]   <prefix>:{nodes}:n:<id>     node hash
-- KEYS[2]   <prefix>:{nodes}:h:<id>     node history list, newest first
-- KEYS[3]   <prefix>:{nodes}:live       live nodes, score = expiry (ms)
-- KEYS[4]   <prefix>:{nodes}:paused     paused queues (set)
-- KEYS[5]   <prefix>:{nodes}:ctl        control version (string)
-- KEYS[6..] <prefix>:{nodes}:cap:<cap>  one per capability of the node
-- ARGV[1]   now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]   node id
-- ARGV[3]   TTL in ms
-- ARGV[4]   history limit (at least 1)
-- ARGV[5]   control version the node knows, "0" for none
-- ARGV[6]   n, the number of field/value pairs that follow
-- ARGV[7 .. 6+2n]  field, value pairs of what the node reports
-- ARGV[7+2n ..]    seq, entry pairs of history, oldest first
--
-- Transition: the hash gets the reported fields, beat = now, exp = now +
-- TTL, and start = now when it did not exist or had expired (it is
-- dropped then with its history, of an earlier life); drain is kept. Each history entry whose seq is
-- above the hash's hseq is pushed at the head of the list and hseq follows;
-- the list is trimmed to the limit. The node is in the live zset and in
-- each of its capability zsets with score exp; entries that expired are
-- dropped from the zsets touched. Every key touched lives at least TTL
-- more (PEXPIRE, never shortened for the shared zsets).
--
-- Returns {drain 1 or 0, control version, now ms, paused queues...}: the
-- paused queues (sorted by the caller) only when the version differs from
-- ARGV[5] or ARGV[5] is "0".
--
-- Retried: a retried heartbeat writes the same fields again, moves beat
-- and exp to the later now, and adds no history entry twice (hseq).
-- Lost data: a node whose hash Redis lost is registered again by its next
-- heartbeat, with a new start and an empty history; a drain request it
-- had not seen yet is lost with it and must be sent again. A lost control
-- key reads as version 0, which no node knows once it saw a pause (see
-- queue_pause.lua), so every node takes the paused set as it stands.
-- Out of memory: allow-oom and run whole: a full Redis must not make every
-- node vanish from the registry. Its growth is bounded: the record is
-- replaced, the history capped. On the EVALSHA path the first write, the
-- ZREMRANGEBYSCORE, frees memory and the HSET may be refused; nothing
-- else has changed then but dropped expired entries.
-- Cut off: a node that cannot reach Redis sends no heartbeat; its record
-- expires TTL after the last one and it drops out of every listing. Its
-- next heartbeat registers it again.

local now = now_ms(ARGV[1])
local ttl = tonumber(ARGV[3])
local exp = now + ttl
local id = ARGV[2]
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local old_exp = tonumber(redis.call('HGET', KEYS[1], 'exp') or '0')
if old_exp <= now then
  -- Missing, or expired on the store's clock but not yet by Redis.
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[1], 'start', int(now), 'hseq', '0')
end
local n = tonumber(ARGV[6])
local fields = {'beat', int(now), 'exp', int(exp)}
for i = 7, 6 + 2 * n do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
local top = tonumber(redis.call('HGET', KEYS[1], 'hseq') or '0')
local pushed = false
for i = 7 + 2 * n, #ARGV - 1, 2 do
  local seq = tonumber(ARGV[i])
  if seq > top then
    redis.call('LPUSH', KEYS[2], ARGV[i + 1])
    top = seq
    pushed = true
  end
end
if pushed then
  redis.call('HSET', KEYS[1], 'hseq', int(top))
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local function index(key)
  redis.call('ZADD', key, exp, id)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
index(KEYS[3])
for i = 6, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  index(KEYS[i])
end
local drain = 0
if redis.call('HGET', KEYS[1], 'drain') == '1' then drain = 1 end
local ver = redis.call('GET', KEYS[5]) or '0'
local out = {drain, ver, int(now)}
if ver ~= ARGV[5] or ARGV[5] == '0' then
  for _, q in ipairs(redis.call('SMEMBERS', KEYS[4])) do out[#out + 1] = q end
end
return out
