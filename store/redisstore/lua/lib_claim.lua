-- lib_claim.lua: the claim step, shared by claim.lua and finish_claim.lua.

-- claim_tasks moves due delayed tasks to ready, then claims up to limit
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority. qkeys holds, per
-- queue, its delayed zset and its four ready lists (urgent first). It
-- appends to out: nowMs, nextDueMs (0: none), n, then per task: runId,
-- task, epoch, leaseUntilMs, definition, parents (u:), payload (its own key,
-- '' when inline), attempt, firstStartMs, k (parents that succeeded), then k
-- pairs parentName, result. A task claimed here that this very call made
-- ready takes its wake-up token back. An entry whose move is refused is
-- dropped like one whose task is no longer ready.
local function claim_tasks(ctx, active, qkeys, nq, worker, limit, lease, bound, out)
  local until_ms = ctx.now + lease

  -- 1. promote due delayed tasks.
  for qi = 1, nq do
    local b = 5 * (qi - 1)
    local due = redis.call('ZRANGEBYSCORE', qkeys[b + 1], '-inf', ctx.now, 'LIMIT', 0, bound)
    for _, e in ipairs(due) do
      redis.call('ZREM', qkeys[b + 1], e)
      local id, name = parse_entry(e)
      if id then
        local rk = key(ctx.base, 'r', id)
        local t = state_get(rk, name)
        local h = t and def_get(rk, name)
        if t and h and (t.st == 'W' or t.st == 'Y') then
          local p = tonumber(h.prio)
          if p and p >= 0 and p <= 3 and task_to(ctx, rk, id, nil, name, t, 'R', h) then
            redis.call('RPUSH', qkeys[b + 2 + (3 - p)], e)
          end
        end
      end
    end
  end

  -- 2. pop ready entries, up to the number still wanted per LPOP. The
  -- buffered writes are sent first, so the records read below come straight
  -- from Redis and are current; each claimed task's fields are read with one
  -- HMGET, its moves made packed and written with one HSET. Tasks go
  -- straight into out after the three head values, filled in at the end.
  flush()
  local head = #out
  out[head + 1], out[head + 2], out[head + 3] = 0, 0, 0
  local got = out
  local leased = {}
  local payload_at, payload_keys = {}, {}
  local n = 0
  local stale = 0
  local base = ctx.base
  for p = 3, 0, -1 do
    for qi = 1, nq do
      local lk = qkeys[5 * (qi - 1) + 2 + (3 - p)]
      while n < limit and stale < 1000 + limit do
        local es = redis.call('LPOP', lk, limit - n)
        if not es then break end
        for _, e in ipairs(es) do
          local id, name = string.match(e, '^([^ ]*) (.*)$')
          local rk, sf, d, ps, r, t, deps, apart, ns, nm
          if id then
            rk = base .. 'r:' .. id
            sf = 's:' .. name
            local v = redis.call('HMGET', rk, 'm', sf, 'd:' .. name, 'u:' .. name)
            local m, s = v[1], v[2]
            d, ps = v[3], v[4]
            t = m and s and d and state_scan(s, scan_t)
            if t and t.st == 'R' then
              r = meta_scan(m, scan_r)
              deps, apart = string.match(d, '^[^,\n]+,%d,%-?%d+,%-?%d+,%d,(%d+),([01])\n')
            end
          end
          if r and deps then
            t.epoch = t.epoch + 1
            if t.attempt == '0' then t.attempt = '1' end
            t.worker = worker
            ns = task_to(ctx, rk, id, r, name, t, 'U', nil, true)
            if ns and r.st == 'P' then
              nm = run_to(ctx, rk, id, r, 'U', true)
              if not nm then ns = nil end
            end
          end
          if not ns then
            stale = stale + 1
          else
            local q = ctx.readied[e]
            if q then
              ctx.readied[e] = nil
              owe(ctx, q, -1)
            end
            local c = hcache[rk]
            if nm then
              redis.call('HSET', rk, sf, ns, 'm', nm)
              if c then c.m = nm end
            else
              redis.call('HSET', rk, sf, ns)
            end
            if c then c[sf] = ns end
            leased[#leased + 1] = until_ms
            leased[#leased + 1] = e
            n = n + 1
            local g = #got
            got[g + 1] = id
            got[g + 2] = name
            got[g + 3] = t.epoch
            got[g + 4] = until_ms
            got[g + 5] = d
            got[g + 6] = ps or ''
            if apart == '1' then
              payload_at[#payload_at + 1] = g + 7
              payload_keys[#payload_keys + 1] = base .. 'p:' .. id .. ':' .. name
            end
            got[g + 7] = ''
            got[g + 8] = tonumber(t.attempt)
            got[g + 9] = r.created + t.first
            if deps ~= '0' then
              ps = ps or ''
              -- parents: their states and results in one HMGET per 500; a parent
              -- succeeded when its state starts with S.
              local pn = {}
              for pname in string.gmatch(ps, '([^ :]+):%d') do pn[#pn + 1] = pname end
              local k = 0
              local at = g + 10
              for i = 1, #pn, 500 do
                local j = math.min(i + 499, #pn)
                local fs = {}
                for x = i, j do
                  local pname = pn[x]
                  fs[#fs + 1] = 's:' .. pname
                  fs[#fs + 1] = 'r:' .. pname
                end
                local vs = redis.call('HMGET', rk, unpack(fs))
                for x = 1, #fs, 2 do
                  local pst = vs[x]
                  if pst and string.byte(pst, 1) == 83 then
                    k = k + 1
                    got[at + 1] = pn[i + (x - 1) / 2]
                    got[at + 2] = vs[x + 1] or ''
                    at = at + 2
                  end
                end
              end
              got[g + 10] = k
            else
              got[g + 6] = ''
              got[g + 10] = 0
            end
          end
        end
      end
    end
  end
  for i = 1, #leased, 1000 do
    redis.call('ZADD', active, unpack(leased, i, math.min(i + 999, #leased)))
  end
  for i = 1, #payload_keys, 1000 do
    local j = math.min(i + 999, #payload_keys)
    local vs = redis.call('MGET', unpack(payload_keys, i, j))
    for k = i, j do got[payload_at[k]] = vs[k - i + 1] or '' end
  end
  flush()

  -- 3. the earliest live delayed due time on these queues.
  local next_due = 0
  for qi = 1, nq do
    local zk = qkeys[5 * (qi - 1) + 1]
    for _ = 1, 16 do
      local first = redis.call('ZRANGE', zk, 0, 0, 'WITHSCORES')
      if #first == 0 then break end
      local id, name = parse_entry(first[1])
      local t = id and state_get(key(ctx.base, 'r', id), name)
      if t and (t.st == 'W' or t.st == 'Y') then
        local due = tonumber(first[2])
        if next_due == 0 or due < next_due then next_due = due end
        break
      end
      redis.call('ZREM', zk, first[1])
    end
  end

  out[head + 1] = ctx.now
  out[head + 2] = next_due
  out[head + 3] = n
end
