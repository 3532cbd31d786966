-- lib_delete.lua: forget_run, the removal of a finished run with everything
-- it owns, shared by delete_run.lua (on request) and prune_runs.lua (at the
-- end of its retention).

-- forget_run deletes finished run id of status letter st: its hash, its
-- dead-letter list, its idempotency key k (when it still names this run),
-- its entries in the query indexes (it, iw, is, iu, as its field q named
-- them: wf, svc, tenant) and its expiry entry. A finished run has no
-- payload key (task_to drops each as its task ends), no queue entry and no
-- lease. Deleting what is already gone changes nothing, so forgetting a
-- run twice is harmless.
local function forget_run(ctx, id, st, wf, svc, tenant, k)
  local b = ctx.base
  if k and redis.call('GET', key(b, 'k', k)) == id then redis.call('DEL', key(b, 'k', k)) end
  redis.call('DEL', key(b, 'r', id), key(b, 'x', id))
  if wf == nil then return end
  redis.call('ZREM', key(b, 'it', st), id)
  if wf ~= '' then redis.call('ZREM', key(b, 'iw', wf), id) end
  if svc ~= '' then
    redis.call('ZREM', key(b, 'is', svc), id)
    if tenant ~= '' then redis.call('ZREM', key(b, 'iu', svc, tenant), id) end
  end
  redis.call('ZREM', key(b, 'ie'), expiry_member(id, st, wf, svc, tenant))
end
