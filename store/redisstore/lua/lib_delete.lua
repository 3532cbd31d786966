-- lib_delete.lua: forget_run, the removal of a finished run with everything
-- it owns, shared by run_delete.lua and run_delete_many.lua (on request,
-- through delete_run) and run_prune.lua (at the end of its retention).

-- forget_run deletes finished run id of status letter st: its hash, its
-- dead-letter list, the lines its tasks logged (tl:), its idempotency key k (when it still names this run)
-- and its entries in the query indexes (ia, it:<st>, if:<st>, and the name
-- indexes its field q named: wf, svc, tenant, in the streams of format 8
-- when its creation, created, is known, and in the zsets of format 7:
-- names.forget, lib_names.lua). Its entry in an expiry list stays
-- until the pruner pops it (removing it from the middle of a list would
-- cost a scan); forgetting a run again then changes nothing. A finished run
-- keeps payload keys only for tasks that did not succeed (task_to drops the
-- others), and only in a run of at most apart_max_tasks tasks; it has no
-- queue entry and no lease.
local function forget_run(ctx, id, st, wf, svc, tenant, k, created)
  local b = ctx.base
  if k and redis.call('GET', key(b, 'k', k)) == id then redis.call('DEL', key(b, 'k', k)) end
  -- its letters leave the shard's dead-letter index; another run's stay
  for _, name in ipairs(redis.call('LRANGE', key(b, 'x', id), 0, -1)) do
    redis.call('ZREM', key(b, 'dl'), entry(id, name))
  end
  -- the payloads kept apart of its tasks that did not succeed
  local o = redis.call('HGET', key(b, 'r', id), 'o')
  if o then
    local ps = {}
    for name in string.gmatch(o, '[^ ]+') do ps[#ps + 1] = key(b, 'p', id, name) end
    if #ps <= apart_max_tasks then redis.call('DEL', unpack(ps)) end
  end
  redis.call('DEL', key(b, 'r', id), key(b, 'x', id), key(b, 'tl', id))
  if wf == nil then return end
  redis.call('ZREM', key(b, 'ia'), id)
  redis.call('ZREM', key(b, 'it', st), id)
  redis.call('ZREM', key(b, 'if', st), id)
  names.forget(b, id, created, wf, svc, tenant)
end

-- delete_run deletes run id (hash rk) on request when it has finished, with
-- the copy of its attempt records kept past it, h:<run> (keep_history),
-- and returns OK, NOT_FOUND, CORRUPT (unreadable meta) or ACTIVE (it has
-- not finished: left as it is).
local function delete_run(ctx, rk, id)
  local m = redis.call('HGET', rk, 'm')
  if not m then return NOT_FOUND end
  local st = string.sub(m, 1, 1)
  if not run_moves[st] then return CORRUPT end
  if not run_final[st] then return ACTIVE end
  local wf, svc, tenant = run_query(ctx, rk, false)
  local r = meta_scan(m, scan_r)
  forget_run(ctx, id, st, wf, svc, tenant, hget(rk, 'k'), r and r.created)
  redis.call('DEL', key(ctx.base, 'h', id))
  return OK
end
