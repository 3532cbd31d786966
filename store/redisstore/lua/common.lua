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

-- split s on the plain one-character separator sep, into at most max parts
-- (the last part keeps the rest).
local function split(s, sep, max)
  local out = {}
  if s == nil or s == '' then return out end
  local i = 1
  while true do
    if max and #out == max - 1 then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    local j = string.find(s, sep, i, true)
    if not j then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end

local function num(s) return tonumber(s) end
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

local function meta_get(rk)
  local m = redis.call('HGET', rk, 'm')
  if not m then return nil end
  local f = split(m, ',')
  if #f ~= 10 then return false end
  local r = {st = f[1], total = num(f[2]), succ = num(f[3]), failed = num(f[4]),
    skipped = num(f[5]), cancelled = num(f[6]), created = num(f[7]),
    started = num(f[8]), ended = num(f[9]), strat = f[10]}
  if not (r.total and r.succ and r.failed and r.skipped and r.cancelled and r.created) then
    return false
  end
  return r
end

local function meta_put(rk, r)
  redis.call('HSET', rk, 'm', r.st .. ',' .. int(r.total) .. ',' .. int(r.succ) .. ',' ..
    int(r.failed) .. ',' .. int(r.skipped) .. ',' .. int(r.cancelled) .. ',' ..
    int(r.created) .. ',' .. opt(r.started) .. ',' .. opt(r.ended) .. ',' .. r.strat)
end

local function run_terminal(r)
  return r.st == 'S' or r.st == 'F' or r.st == 'C'
end

local function state_get(rk, name)
  local s = redis.call('HGET', rk, 's:' .. name)
  if not s then return nil end
  local f = split(s, ',', 10)
  if #f ~= 10 then return false end
  local t = {st = f[1], attempt = num(f[2]), epoch = num(f[3]), crashes = num(f[4]),
    resolved = num(f[5]), satisfied = num(f[6]), first = num(f[7]), claim = num(f[8]),
    ended = num(f[9]), worker = f[10]}
  if not (t.attempt and t.epoch and t.crashes and t.resolved and t.satisfied) then
    return false
  end
  return t
end

local function state_put(rk, name, t)
  redis.call('HSET', rk, 's:' .. name, t.st .. ',' .. int(t.attempt) .. ',' .. int(t.epoch) .. ',' ..
    int(t.crashes) .. ',' .. int(t.resolved) .. ',' .. int(t.satisfied) .. ',' ..
    opt(t.first) .. ',' .. opt(t.claim) .. ',' .. opt(t.ended) .. ',' .. t.worker)
end

local function task_terminal(st)
  return st == 'S' or st == 'F' or st == 'K' or st == 'C' or st == 'D'
end

-- def_get parses the Lua-readable header of a task definition; the second
-- result is the whole field. The header carries the number of parents, so
-- no edge list is read here.
local function def_get(rk, name)
  local d = redis.call('HGET', rk, 'd:' .. name)
  if not d then return nil end
  local nl = string.find(d, '\n', 1, true)
  if not nl then return false end
  local f = split(string.sub(d, 1, nl - 1), ',')
  if #f ~= 7 then return false end
  local h = {queue = f[1], prio = f[2], runat = num(f[3]), delay = num(f[4]), join = f[5],
    deps = num(f[6]), apart = f[7] == '1'}
  if not (h.runat and h.delay and h.deps) or h.queue == '' then return false end
  return h, d
end

-- edges parses an edge list "name:cond name:cond" into {name, cond} pairs.
local function edges(s)
  local out = {}
  for _, p in ipairs(split(s, ' ')) do
    local c = string.find(p, ':', 1, true)
    if c then
      out[#out + 1] = {name = string.sub(p, 1, c - 1), cond = string.sub(p, c + 1)}
    else
      out[#out + 1] = {name = p, cond = '0'}
    end
  end
  return out
end

-- attempt appends one attempt record for the task's current claim. The
-- field grows with the attempts of this one task only (bounded by its retry
-- policy, crash limit and releases).
local function attempt(rk, name, t, r, now, outcome, err)
  err = err or ''
  local claim = t.claim or 0
  local rec = int(t.attempt) .. ',' .. int(t.epoch) .. ',' .. int(claim) .. ',' ..
    int(now - r.created - claim) .. ',' .. outcome .. ',' .. int(#t.worker) .. ',' .. int(#err) ..
    ';' .. t.worker .. err
  local f = 'a:' .. name
  local old = redis.call('HGET', rk, f)
  if old then rec = old .. rec end
  redis.call('HSET', rk, f, rec)
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
  redis.call('RPUSH', key(ctx.base, 'q', h.queue, h.prio), e)
  owe(ctx, h.queue, 1)
  ctx.readied[e] = h.queue
end

local function push_delayed(ctx, id, name, h, due)
  redis.call('ZADD', key(ctx.base, 'z', h.queue), due, entry(id, name))
  owe(ctx, h.queue, 1)
end

-- wake pushes, per queue, up to min(owed, 64 - LLEN) tokens to the queue's
-- wake list n:<queue>.
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
  if h and h.apart then redis.call('DEL', key(ctx.base, 'p', id, name)) end
end

-- release_children resolves the edges out of a task that just ended, and of
-- every task skipped as a consequence, with a worklist (no recursion).
-- Returns false when a record on the way cannot be read.
local function release_children(ctx, rk, id, r, name, st)
  local work = {{name = name, st = st}}
  while #work > 0 do
    local p = table.remove(work)
    local cs = redis.call('HGET', rk, 'c:' .. p.name)
    if cs then
      for _, e in ipairs(edges(cs)) do
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
    local k = redis.call('HGET', rk, 'k')
    if k then redis.call('PEXPIRE', key(ctx.base, 'k', k), ctx.retention) end
  end
end

-- stop_run cancels every unfinished task and ends the run with status st.
-- Running tasks lose their lease (epoch + 1, attempt record "cancelled").
-- It visits every task once: a stop is one event per run.
local function stop_run(ctx, rk, id, r, st, reason)
  local active = key(ctx.base, 'active')
  for _, name in ipairs(split(redis.call('HGET', rk, 'o') or '', ' ')) do
    local t = state_get(rk, name)
    if t and not task_terminal(t.st) then
      if t.st == 'U' then
        t.epoch = t.epoch + 1
        attempt(rk, name, t, r, ctx.now, 'x', reason)
        redis.call('ZREM', active, entry(id, name))
      end
      if reason ~= '' then redis.call('HSET', rk, 'e:' .. name, reason) end
      end_task(ctx, rk, id, r, name, t, 'C')
      state_put(rk, name, t)
    end
  end
  r.st = st
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  run_ended(ctx, rk, id, r)
end

-- finish_run ends the run once every task is terminal.
local function finish_run(ctx, rk, id, r)
  if run_terminal(r) then return end
  if r.succ + r.failed + r.skipped + r.cancelled < r.total then return end
  if r.failed > 0 and r.strat ~= 'k' then r.st = 'F' else r.st = 'S' end
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  run_ended(ctx, rk, id, r)
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

-- finish_one applies one outcome (1 succeeded, 2 retry, 3 failed,
-- 4 released) and returns a code (0 applied, 1 not found, 2 stale epoch,
-- 4 corrupt record) and the run's status letter after it.
local function finish_one(ctx, active, rk, id, name, epoch, outcome, result, err, delay)
  local r = meta_get(rk)
  if r == nil then return 1, '' end
  if r == false then return 4, '' end
  local t = state_get(rk, name)
  if t == nil then return 1, r.st end
  if t == false then return 4, r.st end
  if t.st ~= 'U' or t.epoch ~= epoch then return 2, r.st end
  local h = def_get(rk, name)
  if not h then return 4, r.st end

  -- validated: writes start here.
  redis.call('ZREM', active, entry(id, name))
  if outcome == 1 then
    attempt(rk, name, t, r, ctx.now, 's', err)
    if result ~= '' then redis.call('HSET', rk, 'r:' .. name, result) end
    redis.call('HDEL', rk, 'e:' .. name)
    end_task(ctx, rk, id, r, name, t, 'S', h)
    state_put(rk, name, t)
    release_children(ctx, rk, id, r, name, 'S')
  elseif outcome == 2 then
    attempt(rk, name, t, r, ctx.now, 'r', err)
    redis.call('HSET', rk, 'e:' .. name, err)
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
    redis.call('HSET', rk, 'e:' .. name, err)
    fail_task(ctx, rk, id, r, name, t, 'F', h)
  else
    attempt(rk, name, t, r, ctx.now, 'l', err)
    t.epoch = t.epoch + 1
    t.st = 'R'
    push_ready(ctx, id, name, h)
    state_put(rk, name, t)
  end
  if not run_terminal(r) then
    meta_put(rk, r)
    finish_run(ctx, rk, id, r)
  end
  return 0, r.st
end

-- finish_batch applies n outcomes, each on its own; rks[i] is the run hash
-- of the i-th outcome and its arguments start at ARGV[first + 7(i-1)]: run
-- id, task, epoch, outcome, result, error, retry delay in ms. It appends
-- two values per outcome to out: the code and the run's status letter.
local function finish_batch(ctx, active, rks, first, n, out)
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

  -- 2. pop ready entries.
  local got = {}
  local n = 0
  local stale = 0
  for p = 3, 0, -1 do
    for qi = 1, nq do
      local lk = qkeys[5 * (qi - 1) + 2 + (3 - p)]
      while n < limit and stale < 1000 + limit do
        local e = redis.call('LPOP', lk)
        if not e then break end
        local id, name = parse_entry(e)
        local rk = id and key(ctx.base, 'r', id)
        local r = rk and meta_get(rk)
        local t = r and state_get(rk, name)
        local h, d
        if t then h, d = def_get(rk, name) end
        if not (r and t and h and t.st == 'R') then
          stale = stale + 1
        else
          local q = ctx.readied[e]
          if q then
            ctx.readied[e] = nil
            owe(ctx, q, -1)
          end
          t.st = 'U'
          t.epoch = t.epoch + 1
          if t.attempt == 0 then t.attempt = 1 end
          t.worker = worker
          if not t.first then t.first = ctx.now - r.created end
          t.claim = ctx.now - r.created
          state_put(rk, name, t)
          redis.call('ZADD', active, until_ms, e)
          if r.st == 'P' then
            r.st = 'U'
            r.started = ctx.now - r.created
            meta_put(rk, r)
          end
          n = n + 1
          got[#got + 1] = id
          got[#got + 1] = name
          got[#got + 1] = int(t.epoch)
          got[#got + 1] = int(until_ms)
          got[#got + 1] = d
          local results = {}
          if h.deps > 0 then
            local ps = redis.call('HGET', rk, 'u:' .. name) or ''
            got[#got + 1] = ps
            for _, pe in ipairs(edges(ps)) do
              local pt = state_get(rk, pe.name)
              if pt and pt.st == 'S' then
                results[#results + 1] = pe.name
                results[#results + 1] = redis.call('HGET', rk, 'r:' .. pe.name) or ''
              end
            end
          else
            got[#got + 1] = ''
          end
          if h.apart then
            got[#got + 1] = redis.call('GET', key(ctx.base, 'p', id, name)) or ''
          else
            got[#got + 1] = ''
          end
          got[#got + 1] = int(t.attempt)
          got[#got + 1] = int(r.created + t.first)
          got[#got + 1] = #results / 2
          for _, v in ipairs(results) do got[#got + 1] = v end
        end
      end
    end
  end

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

  out[#out + 1] = int(ctx.now)
  out[#out + 1] = int(next_due)
  out[#out + 1] = n
  for _, v in ipairs(got) do out[#out + 1] = v end
end
