-- prune_runs.lua: remove the runs of one shard whose retention is over,
-- with their index entries: the janitor's step.
--
-- KEYS[1]  <prefix>:{s}:ie   expiry zset of the shard (score: end of
--          retention in ms; member "<run>:<st>:<wf>:<svc>:<tenant>")
-- ARGV[1]  "<now>;<event cap>;<stats window>": now in ms since the Unix epoch or
--          "" to use Redis TIME, the stream cap in entries, 0 when stats are off
-- ARGV[2]  shard base "<prefix>:{s}:"
-- ARGV[3]  limit: the most runs pruned by this call
--
-- Transition: none; each run whose expiry entry is due leaves the store
-- through forget_run (lib_delete.lua): its keys have usually expired by
-- their TTL at that very instant, and whatever is left (a TTL on another
-- clock, a key index) goes with its index entries.
--
-- Returns {pruned, more}: more is 1 when due entries remain.
--
-- Retried: an entry pruned is gone, so a retry prunes the next ones or
-- nothing; many processes may prune one shard at once and each entry is
-- removed once, by whichever call reads it first (the call is atomic).
-- Lost data: an entry Redis lost leaves its run's index entries behind
-- (the run's keys still expire by TTL); a query skips a run whose hash is
-- gone. Entries of runs Redis lost are pruned as usual.
-- Out of memory: the function is declared allow-oom: it only deletes. On
-- the EVALSHA path DEL and ZREM need no memory either.
-- Cut off: atomic per call; an unanswered call pruned its batch or not.
-- The DEL of the event stream, when the shard is left without a run, needs
-- no memory and is as idempotent as the rest (a second DEL finds nothing).

local ek = KEYS[1]
local ctx = new_ctx(ARGV[2], ARGV[1], 0)
local limit = tonumber(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', ek, '-inf', ctx.now, 'LIMIT', 0, limit + 1)
local n = math.min(limit, #due)
for i = 1, n do
  local id, st, wf, svc, tenant = string.match(due[i], '^([^:]*):(%a):([^:]*):([^:]*):([^:]*)$')
  if id then
    local k = redis.call('HGET', key(ctx.base, 'r', id), 'k')
    forget_run(ctx, id, st, wf, svc, tenant, k)
  else
    redis.call('ZREM', ek, due[i])
  end
end
local more = 0
if #due > limit then more = 1 end
-- The shard's event stream outlives its runs (it is bounded by its cap,
-- not by retention); once a prune leaves the shard without a run, pending,
-- running or kept for retention, the stream goes too. A reader whose
-- cursor was in it is told it fell behind.
if n > 0 and more == 0 and redis.call('ZCARD', ek) == 0 and redis.call('ZCARD', key(ctx.base, 'it', 'P')) == 0
  and redis.call('ZCARD', key(ctx.base, 'it', 'U')) == 0 then
  redis.call('DEL', key(ctx.base, 'e'))
end
return {n, more}
