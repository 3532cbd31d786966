-- run_prune.lua: remove the runs of one shard whose retention is over,
-- with their index entries: the janitor's step.
--
-- KEYS[1]  <prefix>:{s}:iel   the retentions (ms) that have an expiry list
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (the expiry lists ie:<ms>, the
--          runs, their key indexes and query indexes, the event stream)
-- ARGV[3]  limit: the most runs pruned by this call
--
-- Transition: none; each run at the head of an expiry list whose time has
-- come (entries "<end ms>:<run>:<st>:<q>", the run "<run>@<created ms>"
-- from format version 8, due at the end plus the list's
-- retention, in due order in each list; expiry_entry) leaves the store through forget_run (lib_delete.lua): its keys
-- have usually expired by their TTL at that very instant, and whatever is
-- left (a TTL on another clock, a key index) goes with its index entries.
-- An emptied list leaves the set iel. An entry is stale, and only dropped,
-- when its run is still there but is no longer the run that ended then: a
-- replay (run_replay) made it active again, so its status is not a
-- finished one, or it ended again later, so its end (created + end offset)
-- is no longer the entry's due time less the list's retention; the later
-- end has an entry of its own.
--
-- Returns {pruned, more}: pruned counts the runs removed, not the stale
-- entries dropped; more is 1 when due entries remain.
--
-- Retried: an entry pruned is gone, so a retry prunes the next ones or
-- nothing; many processes may prune one shard at once and each entry is
-- removed once, by whichever call pops it first (the call is atomic).
-- Lost data: an entry Redis lost leaves its run's index entries behind
-- (the run's keys still expire by TTL); a query skips a run whose hash is
-- gone, and counts include it (a name filter's count, which reads, does
-- not). An entry of the earlier forms names no creation: a name stream
-- entry of its run is found by the run's hash if still there, else it
-- stays, skipped by readers (a run of format 8 ended by a process still
-- writing format 7, which happens only during an upgrade).
-- Out of memory: the function is declared allow-oom: it only deletes. On
-- the EVALSHA path LPOP, DEL, ZREM, XDEL and SREM need no memory either.
-- Cut off: atomic per call; an unanswered call pruned its batch or not.
-- The DEL of the event stream, when the shard is left without a run, needs
-- no memory and is as idempotent as the rest (a second DEL finds nothing).

-- expiry_entry parses an entry of list ie:<ret>: its due time (a number),
-- run, status letter, workflow, service and tenant; nil for an entry it
-- cannot read. An entry is "<end ms>:<run>:<st>:<q>" (expiry_member), its
-- q holding a ':' after the tenant, or, written before that form,
-- "<due ms>:<run>:<st>:<workflow>:<service>:<tenant>".
local function expiry_entry(e, ret)
  local t, id, st, wf, svc, tenant, more = string.match(e, '^(%d+):([^:]*):(%a):([^:]*):([^:]*):([^:]*)(:?)')
  if not t then return nil end
  if more ~= ':' then return tonumber(t), id, st, wf, svc, tenant end
  local at = string.find(id, '@', 1, true)
  if not at then return tonumber(t) + tonumber(ret), id, st, wf, svc, tenant end
  -- one assignment each: the two would see each other's id in miniredis
  local created = string.sub(id, at + 1)
  return tonumber(t) + tonumber(ret), string.sub(id, 1, at - 1), st, wf, svc, tenant, created
end

local ctx = new_ctx(ARGV[2], ARGV[1])
local limit = tonumber(ARGV[3])
local pruned, popped, more = 0, 0, 0
for _, ret in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local lk = key(ctx.base, 'ie', ret)
  local left = limit - popped
  if left <= 0 then
    more = 1
    break
  end
  local head = redis.call('LRANGE', lk, 0, left)
  local n = 0
  for i = 1, #head do
    local due, id, st, wf, svc, tenant, created = expiry_entry(head[i], ret)
    if due and due > ctx.now then break end
    if i > left then
      more = 1
      break
    end
    n = i
    if due then
      local rk = key(ctx.base, 'r', id)
      local m = redis.call('HGET', rk, 'm')
      local r = m and meta_parse(m)
      if not r or (run_final[r.st] and r.created + (tonumber(r.ended) or 0) == due - tonumber(ret)) then
        forget_run(ctx, id, st, wf, svc, tenant, redis.call('HGET', rk, 'k'), created or (r and r.created_s))
        pruned = pruned + 1
      end
    end
  end
  if n > 0 then
    redis.call('LPOP', lk, n)
    popped = popped + n
  end
  if redis.call('LLEN', lk) == 0 then redis.call('SREM', KEYS[1], ret) end
end
-- The shard's event stream outlives its runs (it is bounded by its cap,
-- not by retention); once a prune leaves the shard without a run, pending,
-- running or kept for retention (the index of all runs is empty), the
-- stream goes too. A reader whose cursor was in it is told it fell behind.
if popped > 0 and more == 0 and redis.call('ZCARD', key(ctx.base, 'ia')) == 0 then
  redis.call('DEL', key(ctx.base, 'e'))
end
return {pruned, more}
