-- lib_cancel.lua: stop_run, the cancel of a whole run, shared by
-- run_cancel.lua and by a failure under the stop strategy (lib_finish.lua).

-- stop_run cancels every unfinished task and ends the run with status st.
-- Running tasks lose their lease (epoch + 1, attempt record "cancelled").
-- It visits every task once: a stop is one event per run. Every move is
-- checked before the first change, so a refused stop writes nothing. The
-- hash is written before the lease entries are removed, so that a cancel
-- refused for memory is refused at its first write, whole. Returns false
-- when a move was refused.
local function stop_run(ctx, rk, id, r, st, reason)
  if not run_can(r.st, st) then
    ctx.refused = true
    return false
  end
  local names, ts = {}, {}
  for name in string.gmatch(hget(rk, 'o') or '', '[^ ]+') do
    hmget(rk, {'s:' .. name, 'd:' .. name})
    local t = state_get(rk, name)
    if t and not task_terminal(t.st) then
      if not task_can(t.st, 'C') then
        ctx.refused = true
        return false
      end
      names[#names + 1] = name
      ts[#ts + 1] = t
    end
  end
  local leases = {}
  for i, name in ipairs(names) do
    local t = ts[i]
    if t.st == 'U' then
      t.epoch = t.epoch + 1
      attempt(rk, name, t, r, ctx.now, 'x', reason)
      leases[#leases + 1] = entry(id, name)
    end
    if reason ~= '' then hset(rk, 'e:' .. name, reason) end
    task_to(ctx, rk, id, r, name, t, 'C')
  end
  run_to(ctx, rk, id, r, st)
  flush()
  local active = key(ctx.base, 'active')
  for i = 1, #leases, 1000 do
    redis.call('ZREM', active, unpack(leases, i, math.min(i + 999, #leases)))
  end
  run_ended(ctx, rk, id, r)
  return true
end
