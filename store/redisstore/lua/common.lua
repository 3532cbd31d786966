-- common.lua: helpers prepended to every script (see scripts.go), and the
-- bodies of the finish and claim steps, which finish.lua, claim.lua and
-- finish_claim.lua share. It makes no redis call of its own except through
-- the functions below.
--
-- Encodings (mirrored by codec.go):
--   run hash field m    "st,total,succ,failed,skipped,cancelled,createdMs,startedOff,endedOff,strategy"
--                        st: P pending U running S completed F failed C cancelled
--                        strategy: c continue, s stop, k skip; offsets are ms after createdMs
--   run hash field o    task names in definition order, separated by ' '
--   run hash field k    idempotency key (only for keyed runs)
--   field s:<task>      "st,attempt,epoch,crashes,resolved,satisfied,firstStartOff,claimOff,endOff,worker"
--                        st: P pending (waiting for deps) W pending (due, in the delayed set)
--                            R ready U running Y retrying S succeeded F failed
--                            K skipped C cancelled D dead
--   field d:<task>      "queue,prio,runAtMs,delayMs,join,deps,apart\n" .. Go-encoded spec
--                        deps: number of parents; apart: 1 when the payload is
--                        in its own key p:<run>:<task> (deleted when the task ends)
--   field u:<task>      parents "name:cond name:cond" (tasks with dependencies only)
--   field c:<task>      children "name:cond name:cond" (tasks with dependents only)
--   field r:<task>      result: a flag byte (0 raw, 1 deflate) and the bytes
--   field e:<task>      last error text
--   field a:<task>      attempt records, each "attempt,epoch,startOff,durMs,outcome,wlen,elen;" .. worker .. error
--
-- Per-event work is bounded by the task's own edges: a finishing task reads
-- its children (c:), each pending child's state and definition header; the
-- parents list (u:) is read only when the task is claimed. No step reads a
-- list whose length grows with the run.

local function now_ms(arg)
  local n = tonumber(arg)
  if n then return n end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function int(n) return string.format('%d', n) end
local function opt(n) if n == nil then return '' end return int(n) end

-- key builds a shard-local key from the shard base ("<prefix>:{<shard>}:"),
-- mirroring keys.go. Only used for keys a script discovers while running;
-- they share the slot of the keys in KEYS by construction.
local function key(base, kind, a, b)
  if b ~= nil then return base .. kind .. ':' .. a .. ':' .. b end
  if a ~= nil then return base .. kind .. ':' .. a end
  return base .. kind
end

-- Hash reads and writes of one call go through a cache: a field is read
-- from Redis at most once (hmget fetches several in one call), and writes
-- are buffered and sent by flush() as one HSET per hash; ready entries are
-- buffered too and sent as one RPUSH per list, then deleted keys. Every script calls flush()
-- before it returns (and claim_tasks before it pops).
local hcache = {}
local hdirty = {}
local pushes = {}
local push_order = {}
local fronts = {}
local front_order = {}
local dels = {}
local unleased = {}
local unleased_key = nil
local wrote = false

-- reset empties the buffers above; a function library keeps its locals
-- between calls, so every function call starts with it.
local function reset()
  hcache, hdirty, pushes, push_order, dels, unleased, unleased_key = {}, {}, {}, {}, {}, {}, nil
  fronts, front_order = {}, {}
  wrote = false
end

local function hfields(rk)
  local c = hcache[rk]
  if not c then
    c = {}
    hcache[rk] = c
  end
  return c
end

local function hget(rk, f)
  local c = hfields(rk)
  local v = c[f]
  if v == nil then
    v = redis.call('HGET', rk, f) or false
    c[f] = v
  end
  return v or nil
end

-- hmget loads the fields in fs that are not cached yet, in one HMGET.
local function hmget(rk, fs)
  local c = hfields(rk)
  local want = {}
  for _, f in ipairs(fs) do
    if c[f] == nil then want[#want + 1] = f end
  end
  for i = 1, #want, 1000 do
    local j = math.min(i + 999, #want)
    local vs = redis.call('HMGET', rk, unpack(want, i, j))
    for k = i, j do c[want[k]] = vs[k - i + 1] or false end
  end
end

local function hset(rk, f, v)
  hfields(rk)[f] = v
  local d = hdirty[rk]
  if not d then
    d = {}
    hdirty[rk] = d
  end
  d[f] = true
end

local function hdel(rk, f)
  hfields(rk)[f] = false
  local d = hdirty[rk]
  if d then d[f] = nil end
  redis.call('HDEL', rk, f)
end

-- buffer appends e to the entries buffered for list lk, remembering the
-- order in which lists were first touched.
local function buffer(lists, order, lk, e)
  local es = lists[lk]
  if not es then
    es = {}
    lists[lk] = es
    order[#order + 1] = lk
  end
  es[#es + 1] = e
end

local function rpush(lk, e) buffer(pushes, push_order, lk, e) end

-- lpush puts e back at the head of list lk at the next flush; entries
-- returned to one list keep the order they were returned in.
local function lpush(lk, e) buffer(fronts, front_order, lk, e) end

-- unlease removes a lease entry at the next flush, before the buffered
-- writes: a finish's first write stays the removal of its lease, which
-- Redis allows when out of memory.
local function unlease(active, e)
  unleased_key = active
  unleased[#unleased + 1] = e
end

-- unlease_now is unlease for a step that writes at once instead of through
-- the buffers: the first such step of a call removes the lease entries
-- buffered so far and its own right away, so the call's first write is still
-- the removal of a lease; later ones are buffered as usual.
local function unlease_now(active, e)
  if wrote then
    unlease(active, e)
    return
  end
  unleased_key = active
  unleased[#unleased + 1] = e
  for i = 1, #unleased, 1000 do
    redis.call('ZREM', active, unpack(unleased, i, math.min(i + 999, #unleased)))
  end
  unleased = {}
  wrote = true
end

-- del deletes a key at the next flush, after the buffered writes.
local function del(k)
  dels[#dels + 1] = k
end

local function flush()
  for i = 1, #unleased, 1000 do
    redis.call('ZREM', unleased_key, unpack(unleased, i, math.min(i + 999, #unleased)))
  end
  unleased = {}
  for rk, d in pairs(hdirty) do
    local c = hcache[rk]
    local args = {}
    for f in pairs(d) do
      args[#args + 1] = f
      args[#args + 1] = c[f]
      if #args >= 1000 then
        redis.call('HSET', rk, unpack(args))
        args = {}
      end
    end
    if #args > 0 then redis.call('HSET', rk, unpack(args)) end
  end
  hdirty = {}
  for _, lk in ipairs(push_order) do
    local es = pushes[lk]
    for i = 1, #es, 1000 do
      redis.call('RPUSH', lk, unpack(es, i, math.min(i + 999, #es)))
    end
  end
  pushes = {}
  push_order = {}
  for _, lk in ipairs(front_order) do
    local es = fronts[lk]
    for i = #es, 1, -1 do redis.call('LPUSH', lk, es[i]) end
  end
  fronts = {}
  front_order = {}
  for i = 1, #dels, 1000 do
    redis.call('DEL', unpack(dels, i, math.min(i + 999, #dels)))
  end
  dels = {}
end

-- The packed fields are parsed with one string.match each and written
-- with one string.format: far cheaper in Lua than splitting.
local function meta_get(rk)
  local m = hget(rk, 'm')
  if not m then return nil end
  local st, total, succ, failed, skipped, cancelled, created, started, ended, strat = string.match(m,
    '^(%a),(%d+),(%d+),(%d+),(%d+),(%d+),(%-?%d+),(%-?%d*),(%-?%d*),(%a)$')
  if not st then return false end
  return {st = st, total = tonumber(total), succ = tonumber(succ), failed = tonumber(failed),
    skipped = tonumber(skipped), cancelled = tonumber(cancelled), created = tonumber(created),
    started = tonumber(started), ended = tonumber(ended), strat = strat}
end

local function meta_put(rk, r)
  hset(rk, 'm', string.format('%s,%d,%d,%d,%d,%d,%d,%s,%s,%s', r.st, r.total, r.succ, r.failed,
    r.skipped, r.cancelled, r.created, opt(r.started), opt(r.ended), r.strat))
end

local function run_terminal(r)
  return r.st == 'S' or r.st == 'F' or r.st == 'C'
end

local function state_get(rk, name)
  local s = hget(rk, 's:' .. name)
  if not s then return nil end
  local st, attempt, epoch, crashes, resolved, satisfied, first, claim, ended, worker = string.match(s,
    '^(%a),(%d+),(%d+),(%d+),(%d+),(%d+),(%-?%d*),(%-?%d*),(%-?%d*),(.*)$')
  if not st then return false end
  return {st = st, attempt = tonumber(attempt), epoch = tonumber(epoch), crashes = tonumber(crashes),
    resolved = tonumber(resolved), satisfied = tonumber(satisfied), first = tonumber(first),
    claim = tonumber(claim), ended = tonumber(ended), worker = worker}
end

local function state_put(rk, name, t)
  hset(rk, 's:' .. name, string.format('%s,%d,%d,%d,%d,%d,%s,%s,%s,%s', t.st, t.attempt, t.epoch,
    t.crashes, t.resolved, t.satisfied, opt(t.first), opt(t.claim), opt(t.ended), t.worker))
end

local function task_terminal(st)
  return st == 'S' or st == 'F' or st == 'K' or st == 'C' or st == 'D'
end

-- def_get parses the Lua-readable header of a task definition; the second
-- result is the whole field. The header carries the number of parents, so
-- no edge list is read here.
local function def_get(rk, name)
  local d = hget(rk, 'd:' .. name)
  if not d then return nil end
  local queue, prio, runat, delay, join, deps, apart = string.match(d,
    '^([^,\n]+),(%d),(%-?%d+),(%-?%d+),(%d),(%d+),([01])\n')
  if not queue then return false end
  return {queue = queue, prio = prio, runat = tonumber(runat), delay = tonumber(delay), join = join,
    deps = tonumber(deps), apart = apart == '1'}, d
end

-- edges parses an edge list "name:cond name:cond" into {name, cond} pairs.
local function edges(s)
  local out = {}
  for name, cond in string.gmatch(s, '([^ :]+):(%d)') do
    out[#out + 1] = {name = name, cond = cond}
  end
  return out
end

-- attempt appends one attempt record for the task's current claim. The
-- field grows with the attempts of this one task only (bounded by its retry
-- policy, crash limit and releases).
local function attempt(rk, name, t, r, now, outcome, err)
  err = err or ''
  local claim = t.claim or 0
  local rec = string.format('%d,%d,%d,%d,%s,%d,%d;%s%s', t.attempt, t.epoch, claim,
    now - r.created - claim, outcome, #t.worker, #err, t.worker, err)
  local f = 'a:' .. name
  local old = hget(rk, f)
  if old then rec = old .. rec end
  hset(rk, f, rec)
end

-- met mirrors plait.Condition.Met: cond '0' OnSuccess, '1' OnCompletion,
-- '2' OnFailure; under strategy skip a failed or dead parent counts as skipped.
local function met(cond, ps, strat)
  if strat == 'k' and (ps == 'F' or ps == 'D') then ps = 'K' end
  if cond == '0' then return ps == 'S' end
  if cond == '2' then return ps == 'F' or ps == 'D' end
  if cond == '1' then return ps == 'S' or ps == 'F' or ps == 'D' or ps == 'K' end
  return false
end

-- ctx carries what the transition helpers need: ctx.base, ctx.now,
-- ctx.retention (ms), ctx.wake (queue -> tasks readied or delayed by this
-- call, the wake-up tokens owed) and ctx.readied (ready entries pushed by
-- this call -> queue, so a claim in the same call takes their token back).
local function new_ctx(base, now, retention)
  return {base = base, now = now, retention = retention or 0, wake = {}, readied = {}}
end

local function entry(id, name) return id .. ' ' .. name end

local function owe(ctx, queue, n)
  ctx.wake[queue] = (ctx.wake[queue] or 0) + n
end

local function push_ready(ctx, id, name, h)
  local e = entry(id, name)
  rpush(key(ctx.base, 'q', h.queue, h.prio), e)
  owe(ctx, h.queue, 1)
  ctx.readied[e] = h.queue
end

-- push_front is push_ready to the head of the list: a claim given back
-- unstarted goes back to where it was claimed from.
local function push_front(ctx, id, name, h)
  local e = entry(id, name)
  lpush(key(ctx.base, 'q', h.queue, h.prio), e)
  owe(ctx, h.queue, 1)
  ctx.readied[e] = h.queue
end

local function push_delayed(ctx, id, name, h, due)
  redis.call('ZADD', key(ctx.base, 'z', h.queue), due, entry(id, name))
  owe(ctx, h.queue, 1)
end

-- wake leaves, per queue, min(LLEN + owed, 64) tokens in the queue's wake
-- list n:<queue>: it pushes only what the list lacks (the tokens are all
-- alike), so a full list, the usual state while nobody waits, costs one
-- LLEN.
local function wake(ctx)
  for q, n in pairs(ctx.wake) do
    if n > 0 then
      local wk = key(ctx.base, 'n', q)
      local room = 64 - redis.call('LLEN', wk)
      if n > room then n = room end
      if n > 0 then
        local tokens = {}
        for i = 1, n do tokens[i] = '1' end
        redis.call('RPUSH', wk, unpack(tokens))
      end
    end
  end
end

-- make_due schedules a task whose dependencies are met: due at
-- max(now, runAt, created + delay); ready at once when due <= now.
local function make_due(ctx, rk, id, r, name, t, h)
  local due = ctx.now
  if h.runat > 0 and h.runat > due then due = h.runat end
  if h.delay > 0 and r.created + h.delay > due then due = r.created + h.delay end
  if due <= ctx.now then
    t.st = 'R'
    push_ready(ctx, id, name, h)
  else
    t.st = 'W'
    push_delayed(ctx, id, name, h, due)
  end
  state_put(rk, name, t)
end

local function count_end(r, st)
  if st == 'S' then r.succ = r.succ + 1
  elseif st == 'F' or st == 'D' then r.failed = r.failed + 1
  elseif st == 'K' then r.skipped = r.skipped + 1
  elseif st == 'C' then r.cancelled = r.cancelled + 1 end
end

-- end_task moves t to the terminal status st, counts it, and drops the
-- payload kept in its own key (nothing reads a payload once the task has
-- ended). h is the task's header, or nil to read it.
local function end_task(ctx, rk, id, r, name, t, st, h)
  t.st = st
  t.ended = ctx.now - r.created
  count_end(r, st)
  if h == nil then h = def_get(rk, name) end
  if h and h.apart then del(key(ctx.base, 'p', id, name)) end
end

-- release_children resolves the edges out of a task that just ended, and of
-- every task skipped as a consequence, with a worklist (no recursion).
-- Returns false when a record on the way cannot be read.
local function release_children(ctx, rk, id, r, name, st)
  local work = {{name = name, st = st}}
  while #work > 0 do
    local p = table.remove(work)
    local cs = hget(rk, 'c:' .. p.name)
    if cs then
      local es = edges(cs)
      local fs = {}
      for _, e in ipairs(es) do
        fs[#fs + 1] = 's:' .. e.name
        fs[#fs + 1] = 'd:' .. e.name
      end
      hmget(rk, fs)
      for _, e in ipairs(es) do
        local c = state_get(rk, e.name)
        if not c then return false end
        if c.st == 'P' then
          local ch = def_get(rk, e.name)
          if not ch then return false end
          c.resolved = c.resolved + 1
          if met(e.cond, p.st, r.strat) then c.satisfied = c.satisfied + 1 end
          local due, skip
          if ch.join == '1' then
            due = c.satisfied >= 1
            skip = (not due) and c.resolved == ch.deps
          else
            due = c.satisfied == ch.deps
            skip = (not due) and c.resolved > c.satisfied
          end
          if due then
            make_due(ctx, rk, id, r, e.name, c, ch)
          elseif skip then
            end_task(ctx, rk, id, r, e.name, c, 'K', ch)
            state_put(rk, e.name, c)
            work[#work + 1] = {name = e.name, st = 'K'}
          else
            state_put(rk, e.name, c)
          end
        end
      end
    end
  end
  return true
end

-- run_ended is called once when a run reaches a terminal status: its keys
-- start their retention and RunWait callers, subscribed to the run's
-- channel, wake up. Nothing is stored per finished run for the waiters.
local function run_ended(ctx, rk, id, r)
  redis.call('PUBLISH', key(ctx.base, 'w', id), r.st)
  if ctx.retention > 0 then
    redis.call('PEXPIRE', rk, ctx.retention)
    if r.failed > 0 then redis.call('PEXPIRE', key(ctx.base, 'x', id), ctx.retention) end
    local k = hget(rk, 'k')
    if k then redis.call('PEXPIRE', key(ctx.base, 'k', k), ctx.retention) end
  end
end

-- stop_run cancels every unfinished task and ends the run with status st.
-- Running tasks lose their lease (epoch + 1, attempt record "cancelled").
-- It visits every task once: a stop is one event per run. The hash is
-- written before the lease entries are removed, so that a cancel refused
-- for memory is refused at its first write, whole.
local function stop_run(ctx, rk, id, r, st, reason)
  local active = key(ctx.base, 'active')
  local leases = {}
  for name in string.gmatch(hget(rk, 'o') or '', '[^ ]+') do
    hmget(rk, {'s:' .. name, 'd:' .. name})
    local t = state_get(rk, name)
    if t and not task_terminal(t.st) then
      if t.st == 'U' then
        t.epoch = t.epoch + 1
        attempt(rk, name, t, r, ctx.now, 'x', reason)
        leases[#leases + 1] = entry(id, name)
      end
      if reason ~= '' then hset(rk, 'e:' .. name, reason) end
      end_task(ctx, rk, id, r, name, t, 'C')
      state_put(rk, name, t)
    end
  end
  r.st = st
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  flush()
  for i = 1, #leases, 1000 do
    redis.call('ZREM', active, unpack(leases, i, math.min(i + 999, #leases)))
  end
  run_ended(ctx, rk, id, r)
end

-- finish_run ends the run once every task is terminal; it returns true
-- when it did (and wrote m).
local function finish_run(ctx, rk, id, r)
  if run_terminal(r) then return false end
  if r.succ + r.failed + r.skipped + r.cancelled < r.total then return false end
  if r.failed > 0 and r.strat ~= 'k' then r.st = 'F' else r.st = 'S' end
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  run_ended(ctx, rk, id, r)
  return true
end

-- fail_task ends t as failed or dead, dead-letters it (RPUSH to the run's
-- dead-letter list x:<run>) and applies the run's error strategy. t is
-- written by this function.
local function fail_task(ctx, rk, id, r, name, t, st, h)
  end_task(ctx, rk, id, r, name, t, st, h)
  state_put(rk, name, t)
  redis.call('RPUSH', key(ctx.base, 'x', id), name)
  if r.strat == 's' then
    stop_run(ctx, rk, id, r, 'F', '')
    return true
  end
  return release_children(ctx, rk, id, r, name, st)
end

-- finish_fast applies outcome succeeded to a running task of the current
-- epoch in a run that is not over, with the task's records parsed with one
-- string.match each and rewritten around the parts they keep. It returns
-- nil, having written nothing, for every other case; the fields it read are
-- then in the cache for finish_one.
--
-- When this call has not cached the run hash yet and the task has no
-- children, what it reads (one HMGET) is current and it writes at once, one
-- HSET. Otherwise it reads and writes through the cache, and a task with
-- children releases them with release_children.
local function finish_fast(ctx, active, rk, id, name, epoch, result, err)
  local sf, df, af, ef, cf = 's:' .. name, 'd:' .. name, 'a:' .. name, 'e:' .. name, 'c:' .. name
  local ch = hcache[rk]
  local m, s, d, a, e, c, k
  if ch then
    hmget(rk, {'m', sf, df, af, ef, cf, 'k'})
    m, s, d, a, e, c, k = ch.m, ch[sf], ch[df], ch[af], ch[ef], ch[cf], ch.k
  else
    local v = redis.call('HMGET', rk, 'm', sf, df, af, ef, cf, 'k')
    m, s, d, a, e, c, k = v[1], v[2], v[3], v[4], v[5], v[6], v[7]
    if c then
      ch = hfields(rk)
      ch.m, ch[sf], ch[df], ch[af], ch[ef], ch[cf], ch.k = m, s, d, a, e, c, k
    end
  end
  local mst, total, succ, mid, created, started, mended, strat, st, att, ep, tmid, first, claim, worker, _
  if m and s and d then
    mst, total, succ, mid, created, started, mended, strat = string.match(m,
      '^([PU]),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d+),(%-?%d*),(%-?%d*),(%a)$')
    st, att, ep, tmid, first, claim, worker = string.match(s,
      '^(U),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d*),(%-?%d*),%-?%d*,(.*)$')
  end
  local hend
  if st and mst and tonumber(ep) == epoch then
    _, hend = string.find(d, '^[^,\n]+,%d,%-?%d+,%-?%d+,%d,%d+,[01]\n')
  end
  if not hend then
    if not ch then
      ch = hfields(rk)
      ch.m, ch[sf], ch[df], ch[af], ch[ef], ch[cf], ch.k = m or false, s or false, d or false,
        a or false, e or false, c or false, k or false
    end
    return nil
  end

  -- validated: writes start here, with the lease entry.
  unlease_now(active, entry(id, name))
  local created_n = tonumber(created)
  local claim_n = tonumber(claim) or 0
  local off = ctx.now - created_n
  err = err or ''
  local rec = att .. ',' .. ep .. ',' .. claim_n .. ',' .. (off - claim_n) .. ',s,' .. #worker .. ',' ..
    #err .. ';' .. worker .. err
  if a then rec = a .. rec end
  local ns = 'S,' .. att .. ',' .. ep .. ',' .. tmid .. ',' .. first .. ',' .. claim .. ',' .. off .. ',' .. worker
  if string.byte(d, hend - 1) == 49 then del(key(ctx.base, 'p', id, name)) end

  if ch then
    -- through the cache: the task's fields, its children, then the meta.
    hset(rk, af, rec)
    if result ~= '' then hset(rk, 'r:' .. name, result) end
    if e then hdel(rk, ef) end
    hset(rk, sf, ns)
    local r = meta_get(rk)
    r.succ = r.succ + 1
    release_children(ctx, rk, id, r, name, 'S')
    if not finish_run(ctx, rk, id, r) then meta_put(rk, r) end
    return 0, r.st
  end

  succ = succ + 1
  local done = succ
  local failed = 0
  if mid ~= '0,0,0' then
    local f, sk, cc = string.match(mid, '^(%d+),(%d+),(%d+)$')
    failed = tonumber(f)
    done = done + failed + tonumber(sk) + tonumber(cc)
  end
  local ended = done >= tonumber(total)
  local rst = mst
  local nm
  if ended then
    if failed > 0 and strat ~= 'k' then rst = 'F' else rst = 'S' end
    nm = rst .. ',' .. total .. ',' .. succ .. ',' .. mid .. ',' .. created .. ',' .. started .. ',' .. off ..
      ',' .. strat
  else
    nm = mst .. ',' .. total .. ',' .. succ .. ',' .. mid .. ',' .. created .. ',' .. started .. ',' .. mended ..
      ',' .. strat
  end
  if result ~= '' then
    redis.call('HSET', rk, sf, ns, af, rec, 'm', nm, 'r:' .. name, result)
  else
    redis.call('HSET', rk, sf, ns, af, rec, 'm', nm)
  end
  if e then redis.call('HDEL', rk, ef) end
  if ended then
    redis.call('PUBLISH', key(ctx.base, 'w', id), rst)
    if ctx.retention > 0 then
      redis.call('PEXPIRE', rk, ctx.retention)
      if failed > 0 then redis.call('PEXPIRE', key(ctx.base, 'x', id), ctx.retention) end
      if k then redis.call('PEXPIRE', key(ctx.base, 'k', k), ctx.retention) end
    end
  end
  return 0, rst
end

-- finish_one applies one outcome (1 succeeded, 2 retry, 3 failed,
-- 4 released, 5 returned) and returns a code (0 applied, 1 not found, 2 stale epoch,
-- 4 corrupt record) and the run's status letter after it.
local function finish_one(ctx, active, rk, id, name, epoch, outcome, result, err, delay)
  if outcome == 1 then
    local code, st = finish_fast(ctx, active, rk, id, name, epoch, result, err)
    if code then return code, st end
  end
  hmget(rk, {'m', 's:' .. name, 'd:' .. name, 'a:' .. name, 'e:' .. name, 'c:' .. name, 'k'})
  local r = meta_get(rk)
  if r == nil then return 1, '' end
  if r == false then return 4, '' end
  local t = state_get(rk, name)
  if t == nil then return 1, r.st end
  if t == false then return 4, r.st end
  if t.st ~= 'U' or t.epoch ~= epoch then return 2, r.st end
  local h = def_get(rk, name)
  if not h then return 4, r.st end

  -- validated: writes start here (the lease entry goes first, at the flush).
  unlease(active, entry(id, name))
  if outcome == 1 then
    attempt(rk, name, t, r, ctx.now, 's', err)
    if result ~= '' then hset(rk, 'r:' .. name, result) end
    if hget(rk, 'e:' .. name) then hdel(rk, 'e:' .. name) end
    end_task(ctx, rk, id, r, name, t, 'S', h)
    state_put(rk, name, t)
    release_children(ctx, rk, id, r, name, 'S')
  elseif outcome == 2 then
    attempt(rk, name, t, r, ctx.now, 'r', err)
    hset(rk, 'e:' .. name, err)
    t.attempt = t.attempt + 1
    if delay > 0 then
      t.st = 'Y'
      push_delayed(ctx, id, name, h, ctx.now + delay)
    else
      t.st = 'R'
      push_ready(ctx, id, name, h)
    end
    state_put(rk, name, t)
  elseif outcome == 3 then
    attempt(rk, name, t, r, ctx.now, 'f', err)
    hset(rk, 'e:' .. name, err)
    fail_task(ctx, rk, id, r, name, t, 'F', h)
  elseif outcome == 4 then
    attempt(rk, name, t, r, ctx.now, 'l', err)
    t.epoch = t.epoch + 1
    t.st = 'R'
    push_ready(ctx, id, name, h)
    state_put(rk, name, t)
  else
    -- returned unstarted: no record; a first claim is undone.
    t.epoch = t.epoch + 1
    t.st = 'R'
    if not hget(rk, 'a:' .. name) then
      t.attempt = 0
      t.first = nil
    end
    push_front(ctx, id, name, h)
    state_put(rk, name, t)
  end
  if not run_terminal(r) and not finish_run(ctx, rk, id, r) then meta_put(rk, r) end
  return 0, r.st
end

-- finish_batch applies n outcomes, each on its own; rks[i] is the run hash
-- of the i-th outcome and its arguments start at ARGV[first + 7(i-1)]: run
-- id, task, epoch, outcome, result, error, retry delay in ms. It appends
-- two values per outcome to out: the code and the run's status letter.
local function finish_batch(ctx, active, rks, ARGV, first, n, out)
  for i = 1, n do
    local a = first + 7 * (i - 1)
    local code, st = finish_one(ctx, active, rks[i], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]),
      tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5], tonumber(ARGV[a + 6]) or 0)
    out[#out + 1] = code
    out[#out + 1] = st
  end
end

local function parse_entry(e)
  local sp = string.find(e, ' ', 1, true)
  if not sp then return nil end
  return string.sub(e, 1, sp - 1), string.sub(e, sp + 1)
end

-- claim_tasks moves due delayed tasks to ready, then claims up to limit
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority. qkeys holds, per
-- queue, its delayed zset and its four ready lists (urgent first). It
-- appends to out: nowMs, nextDueMs (0: none), n, then per task: runId,
-- task, epoch, leaseUntilMs, definition, parents (u:), payload (its own key,
-- '' when inline), attempt, firstStartMs, k (parents that succeeded), then k
-- pairs parentName, result. A task claimed here that this very call made
-- ready takes its wake-up token back.
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
          if p and p >= 0 and p <= 3 then
            t.st = 'R'
            state_put(rk, name, t)
            redis.call('RPUSH', qkeys[b + 2 + (3 - p)], e)
          end
        end
      end
    end
  end

  -- 2. pop ready entries, up to the number still wanted per LPOP. The
  -- buffered writes are sent first, so the records read below come straight
  -- from Redis and are current; each claimed task's fields are read with one
  -- HMGET, parsed only as far as the claim needs them, rewritten around the
  -- parts it keeps and written with one HSET. Tasks go straight into out
  -- after the three head values, filled in at the end.
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
          local rk, sf, m, s, d, ps, mst, created, st, att, ep, tmid, first, tend, deps, apart
          if id then
            rk = base .. 'r:' .. id
            sf = 's:' .. name
            local v = redis.call('HMGET', rk, 'm', sf, 'd:' .. name, 'u:' .. name)
            m, s, d, ps = v[1], v[2], v[3], v[4]
          end
          if m and s and d then
            st, att, ep, tmid, first, tend = string.match(s,
              '^(R),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d*),%-?%d*,(%-?%d*),.*$')
            if st then
              mst, created = string.match(m, '^(%a),%d+,%d+,%d+,%d+,%d+,(%-?%d+),%-?%d*,%-?%d*,%a$')
              deps, apart = string.match(d, '^[^,\n]+,%d,%-?%d+,%-?%d+,%d,(%d+),([01])\n')
            end
          end
          if not (mst and deps) then
            stale = stale + 1
          else
            local q = ctx.readied[e]
            if q then
              ctx.readied[e] = nil
              owe(ctx, q, -1)
            end
            local created_n = tonumber(created)
            local epoch = ep + 1
            if att == '0' then att = '1' end
            local off = ctx.now - created_n
            local first_n
            if first == '' then
              first_n = off
              first = off
            else
              first_n = tonumber(first)
            end
            local ns = 'U,' .. att .. ',' .. epoch .. ',' .. tmid .. ',' .. first .. ',' .. off .. ',' .. tend ..
              ',' .. worker
            local c = hcache[rk]
            if mst == 'P' then
              local counts, mended, strat = string.match(m, '^P,(%d+,%d+,%d+,%d+,%d+),%-?%d+,%-?%d*,(%-?%d*),(%a)$')
              local nm = 'U,' .. counts .. ',' .. created .. ',' .. off .. ',' .. mended .. ',' .. strat
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
            got[g + 3] = epoch
            got[g + 4] = until_ms
            got[g + 5] = d
            got[g + 6] = ps or ''
            if apart == '1' then
              payload_at[#payload_at + 1] = g + 7
              payload_keys[#payload_keys + 1] = base .. 'p:' .. id .. ':' .. name
            end
            got[g + 7] = ''
            got[g + 8] = tonumber(att)
            got[g + 9] = created_n + first_n
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
