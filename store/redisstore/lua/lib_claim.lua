-- lib_claim.lua: the claim step, shared by task_claim.lua and
-- task_finish_claim.lua.

-- parent_results appends, after position at of got, a pair parentName,
-- result per parent in ps (a task's u: field) that succeeded, and returns
-- how many: their states and results are read with one HMGET per 500
-- parents, and a parent succeeded when its state starts with S. A task with
-- more parents than the claim's inline limit (ctx.inline, 0: none) gets
-- none of them, neither their names (its parents list is '') nor their
-- results: its count is -1, and the worker reads the results it wants
-- (ResultStore, ParentsOf), so the pickup of a wide join reads no parent.
local function parent_results(rk, ps, got, at)
  local pn = {}
  for pname in string.gmatch(ps, '([^ :]+):%d') do pn[#pn + 1] = pname end
  local k = 0
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
  return k
end

-- next_due returns the earliest due time of a live delayed task on the
-- queues of qkeys (0: none), dropping the stale entries it meets first (at
-- most 16 per queue). The head the promotion read (ctx.z_first) serves as
-- the first read when the promotion moved nothing.
local function next_due(ctx, qkeys, nq)
  local next_ms = 0
  local known = ctx.z_first or {}
  for qi = 1, nq do
    local zk = qkeys[6 * (qi - 1) + 1]
    for i = 1, 16 do
      local first = i == 1 and known[qi] or redis.call('ZRANGE', zk, '0', '0', 'WITHSCORES')
      if #first == 0 then break end
      local id, name = parse_entry(first[1])
      local t = id and state_get(key(ctx.base, 'r', id), name)
      if t and (t.st == 'W' or t.st == 'Y') then
        local due = tonumber(first[2])
        if next_ms == 0 or due < next_ms then next_ms = due end
        break
      end
      redis.call('ZREM', zk, first[1])
    end
  end
  return next_ms
end

-- share_list parses the claim's shares argument: nil for '' (strict
-- priority), else the four counts, urgent first.
local function share_list(arg)
  if arg == nil or arg == '' then return nil end
  local out = {}
  for v in string.gmatch(arg, '%d+') do out[#out + 1] = tonumber(v) end
  if #out ~= 4 then return nil end
  return out
end

-- handler_set parses the claim's handlers argument: nil for '*' (any
-- handler), else a table with each space-separated name set to true. A
-- worker sends the same argument on every claim: the set of the last one
-- is kept across calls (hs_arg, hs_last), and nothing writes to a set.
local handler_set
do
  local hs_arg, hs_last

  handler_set = function(arg)
    if arg == '*' then return nil end
    if arg == hs_arg then return hs_last end
    local hs = {}
    for h in string.gmatch(arg, '%S+') do hs[h] = true end
    hs_arg, hs_last = arg, hs
    return hs
  end
end

-- no_due stands for the due entries of a queue none of whose delayed
-- tasks is due, and z_heads holds the heads read for next_due, each
-- 1 .. nq set by every claim: tables kept across calls rather than made
-- per call. Nothing writes no_due.
local no_due, z_heads = {}, {}

-- claim_tasks moves due delayed tasks to ready, then claims up to limit
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority. qkeys holds, per
-- queue, its delayed zset, its four ready lists (urgent first) and its
-- aside index (g:<queue>). It
-- appends to out: nowMs, nextDueMs (0: none), n, n again (the count a
-- replay answers apart, see replay_claim), then per task: runId,
-- task, epoch, leaseUntilMs, definition, parents (u:), payload (its own key,
-- '' when inline), attempt, firstStartMs, info (the run's field i, '' when
-- an earlier task of this reply belongs to the same run), k (parents that
-- succeeded), then k pairs parentName, result. The info is read by the
-- HMGET that reads the task anyway, and left out ('') for a task of the
-- same run as the task before it in the reply. A task
-- claimed here that this very call made ready takes its wake-up token
-- back. An entry whose move is refused is dropped like one whose task is
-- no longer ready. When memo is a table, "<run>:<task>:<epoch>" of each
-- claimed task is appended to it.
--
-- Routing by handler: hs (handler_set) lists the handlers the claimer
-- runs, or is nil for any. A ready task whose handler is not in hs is set
-- aside instead of claimed: its entry goes to the list "<aside index>:<handler>"
-- of its queue, the handler into the queue's aside index (a set), and
-- "handler <name>" into the run hash field g:<task> (what RunGet answers as
-- WaitingFor); it stays ready. A task whose limits (field l:) refuse it is
-- held back on its key (limit_admit, lib_limit.lua) the same way. Before the ready lists, a claim takes the
-- tasks set aside on its queues for handlers in hs (every one when hs is
-- nil), dropping the handler from the index once its list is empty, and
-- deleting g:<task> of each it claims. With no task set aside this costs
-- one SMEMBERS of an empty set per queue.
--
-- shares (share_list), when not nil, makes the claim weighted: each level,
-- urgent first, takes up to its count before the strict pass.
local claim_tasks
do
  -- The claim under way, shared by claim_tasks and take: locals of this
  -- block rather than of claim_tasks, so that take is made once per load
  -- instead of as a closure over a dozen locals on every claim.
  -- claim_tasks sets each before its first take and lets go of the tables
  -- when it ends. leased holds the lease entries' ZADD arguments, kept
  -- across calls and counted in nl: what follows nl is left from an
  -- earlier claim and never sent.
  local ctx, hs, worker, memo, got, base, until_ms, until_s
  local n, stale, last_run, payload_at, payload_keys
  local leased, nl = {'+inf', skiplist_pin}, 2

  -- take claims entry e; gk is the aside index of the queue it was popped
  -- from when its handler is still to be checked, nil for an entry taken
  -- from an aside list (its handler was checked there).
  local function take(e, gk)
    -- the entry "<run> <task>" and the header of d: are cut at the bytes
    -- that end their parts (string.find without a pattern, string.byte):
    -- a pattern match costs twice as much, and they are read per task.
    local sp = string.find(e, ' ', 1, true)
    local id, name
    if sp then id, name = string.sub(e, 1, sp - 1), string.sub(e, sp + 1) end
    local rk, sf, d, ps, r, t, deps, apart, ns, nm, info, lim, q
    if id then
      rk = base .. 'r:' .. id
      sf = 's:' .. name
      local v = redis.call('HMGET', rk, 'm', sf, 'd:' .. name, 'u:' .. name, 'i', 'l:' .. name, 'q')
      local m, s = v[1], v[2]
      d, ps, info, lim, q = v[3], v[4], v[5], v[6], v[7]
      t = m and s and d and state_scan(s, scan_t)
      if t and t.st == 'R' then
        r = meta_scan(m, scan_r)
        deps, apart = def_tail(d)
      end
    end
    if r and deps and hs and gk then
      local h = handler_of(d)
      if h and not hs[h] then
        redis.call('RPUSH', gk .. ':' .. h, e)
        redis.call('SADD', gk, h)
        redis.call('HSET', rk, 'g:' .. name, 'handler ' .. h)
        note(ctx, id, waiting_head(t, name) .. ',handler ' .. h, false)
        local wk = gk .. ':' .. h .. ':n'
        if redis.call('LLEN', wk) < 64 then redis.call('RPUSH', wk, '1') end
        return
      end
    end
    if r and deps and lim then
      local admitted, lk = limit_admit(ctx, rk, name, e, lim, t.epoch + 1)
      if not admitted then
        note(ctx, id, waiting_head(t, name) .. ',limit ' .. lk, false)
        return
      end
    end
    if r and deps then
      t.epoch = itoa(t.epoch + 1)
      if t.attempt == '0' then t.attempt = '1' end
      t.worker = worker
      ns = task_to(ctx, rk, id, r, name, t, 'U', nil, true)
      if ns and r.st == 'P' then
        ctx.qk, ctx.q = rk, q or false -- run_index reads the indexes' field from here
        nm = run_to(ctx, rk, id, r, 'U', true)
        if not nm then ns = nil end
      end
    end
    if not ns then
      stale = stale + 1
      return
    end
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
    if not gk then redis.call('HDEL', rk, 'g:' .. name) end
    leased[nl + 1] = until_s
    leased[nl + 2] = e
    nl = nl + 2
    n = n + 1
    local g = #got
    got[g + 1] = id
    got[g + 2] = name
    got[g + 3] = t.epoch
    got[g + 4] = until_ms
    got[g + 5] = d
    got[g + 6] = ps or ''
    if apart == '1' then
      if not payload_at then payload_at, payload_keys = {}, {} end
      payload_at[#payload_at + 1] = g + 7
      payload_keys[#payload_keys + 1] = base .. 'p:' .. id .. ':' .. name
    end
    got[g + 7] = ''
    got[g + 8] = tonumber(t.attempt)
    got[g + 9] = r.created + t.first
    if id == last_run then
      got[g + 10] = ''
    else
      last_run = id
      got[g + 10] = info or ''
    end
    if deps ~= '0' then
      if ctx.inline > 0 and tonumber(deps) > ctx.inline then
        got[g + 6] = '' -- deferred: the worker reads them (ParentsOf)
        got[g + 11] = -1
      else
        got[g + 11] = parent_results(rk, ps or '', got, g + 11)
      end
    else
      got[g + 6] = ''
      got[g + 11] = 0
    end
    if memo then memo[#memo + 1] = id .. ':' .. name .. ':' .. t.epoch end
  end

  -- ex_args holds the keys of nothing_to_claim's EXISTS, kept across
  -- calls; the first ex_n are this call's. probe_next remembers, per shard
  -- base, whether the shard's last claim found nothing (an idle shard):
  -- only then does the next claim ask first, so a claim on a busy shard,
  -- which finds work, never pays the EXISTS. It lives as long as the
  -- function library (a script sent with EVALSHA starts without it and
  -- always asks), and is only a guess: either path claims the same.
  local ex_args, ex_n = {}, 0
  local probe_next = {}

  -- nothing_to_claim reports whether none of the keys a claim would read
  -- exists: the delayed set, the four ready lists and the aside index of
  -- every queue, and the shard's rate wake-ups (ld). Then there is nothing
  -- due, ready, set aside or to wake, and the claim answers at once: one
  -- EXISTS instead of a read of each (an empty claim is what a worker
  -- polling an idle queue sends). It is asked only on a shard whose last
  -- claim found nothing (probe_next), and only when this call buffered no
  -- ready entry (a finish before it releasing a child or giving a task
  -- back), since those are not in Redis yet.
  local function nothing_to_claim(qkeys, nq)
    if probe_next[ctx.base] == false or #push_order > 0 or #front_order > 0 or held_n > 0 then return false end
    local n = 6 * nq
    for i = 1, n do ex_args[i] = qkeys[i] end
    ex_args[n + 1] = key(ctx.base, 'ld')
    ex_n = n + 1
    return redis.call('EXISTS', unpack(ex_args, 1, ex_n)) == 0
  end

  claim_tasks = function(cx, active, qkeys, nq, w, limit, lease, bound, out, mem, handlers, shares)
    ctx, hs, worker, memo = cx, handlers, w, mem
    if nothing_to_claim(qkeys, nq) then
      -- the writes a finish before it buffered, and the call's events
      flush()
      local head = #out
      out[head + 1], out[head + 2], out[head + 3], out[head + 4] = ctx.now, 0, 0, 0
      ctx, hs, memo = nil, nil, nil
      return
    end
    until_ms = ctx.now + lease
    until_s = int(until_ms)

    -- 1. promote due delayed tasks. The head of the delayed set is read
    -- first: when it is not due (or the set is empty, the usual case) that
    -- read is all, and next_due starts from it.
    ctx.z_first = z_heads
    for qi = 1, nq do
      local b = 6 * (qi - 1)
      local head = redis.call('ZRANGE', qkeys[b + 1], '0', '0', 'WITHSCORES')
      local due = no_due
      if head[2] and tonumber(head[2]) <= ctx.now then
        due = redis.call('ZRANGEBYSCORE', qkeys[b + 1], '-inf', ctx.nows, 'LIMIT', '0', itoa(bound))
        ctx.z_first[qi] = nil
      else
        ctx.z_first[qi] = head
      end
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

    -- 1b. tasks held back by a rate whose window moved on (lib_limit.lua).
    limit_wake_due(ctx)

    -- 2. pop ready entries, up to the number still wanted per LPOP. The
    -- buffered writes are sent first, so the records read below come straight
    -- from Redis and are current; each claimed task's fields are read with one
    -- HMGET, its moves made packed and written with one HSET. Tasks go
    -- straight into out after the four head values, filled in at the end.
    -- The events wait for the flush after the pops: one stream entry for the
    -- call. The ready entries this call buffered are held back, not pushed:
    -- each list is popped as its entries in Redis followed by those
    -- (held_fill, lib_handoff.lua), and held_flush pushes what is left.
    flush(true, true)
    local head = #out
    out[head + 1], out[head + 2], out[head + 3], out[head + 4] = 0, 0, 0, 0
    got, nl, n, stale, base, last_run = out, 2, 0, 0, ctx.base, nil
    payload_at, payload_keys = nil, nil -- made by the first payload kept apart

    -- 2a. tasks set aside for the handlers this claim runs.
    for qi = 1, nq do
      local gk = qkeys[6 * qi]
      for _, h in ipairs(redis.call('SMEMBERS', gk)) do
        if n >= limit then break end
        if not hs or hs[h] then
          local ak = gk .. ':' .. h
          while n < limit and stale < 1000 + limit do
            local es = redis.call('LPOP', ak, itoa(limit - n))
            if not es then
              redis.call('SREM', gk, h)
              redis.call('DEL', ak .. ':n')
              break
            end
            for _, e in ipairs(es) do take(e, nil) end
          end
        end
      end
    end

    -- 2b. the ready lists: priority digit p (3 urgent .. 0 low) over the
    -- queues in order, until n reaches upto. With shares (weighted mode),
    -- each level first takes its share, urgent first, then the strict pass
    -- fills what is left of limit. Passes 1 to 4 are the shares' (made only
    -- with shares), 5 to 8 the strict pass: one loop, where a function
    -- would be a closure made anew by every call.
    for pass = shares and 1 or 5, 8 do
      local p, upto = 8 - pass, limit
      if pass <= 4 then p, upto = 4 - pass, math.min(limit, n + shares[pass]) end
      for qi = 1, nq do
        local b = 6 * (qi - 1)
        local lk = qkeys[b + 2 + (3 - p)]
        local gk = qkeys[b + 6]
        while n < upto and stale < 1000 + limit do
          local es = redis.call('LPOP', lk, itoa(upto - n))
          if held_n > 0 then es = held_fill(lk, es, upto - n) end
          if not es then break end
          for _, e in ipairs(es) do take(e, gk) end
        end
      end
    end
    held_flush()
    for i = 1, nl > 2 and nl or 0, 1000 do
      redis.call('ZADD', active, unpack(leased, i, math.min(i + 999, nl)))
    end
    if nl > 2000 then leased = {'+inf', skiplist_pin} end
    for i = 1, payload_keys and #payload_keys or 0, 1000 do
      local j = math.min(i + 999, #payload_keys)
      local vs = redis.call('MGET', unpack(payload_keys, i, j))
      for k = i, j do got[payload_at[k]] = vs[k - i + 1] or '' end
    end
    flush()

    -- 3. the earliest live delayed due time on these queues, or rate
    -- wake-up.
    local next_ms = next_due(ctx, qkeys, nq)
    local lim_ms = limit_next(ctx)
    if lim_ms > 0 and (next_ms == 0 or lim_ms < next_ms) then next_ms = lim_ms end

    out[head + 1] = ctx.now
    out[head + 2] = next_ms
    out[head + 3] = n
    out[head + 4] = n
    probe_next[ctx.base] = n == 0
    ctx, hs, memo, got, payload_at, payload_keys = nil, nil, nil, nil, nil, nil
  end
end

-- The claim memory c:<request> (task_claim.lua, task_finish_claim.lua)
-- keeps what a call sent with a request id did, for as long as its leases
-- last, so that the same call sent again (its reply was lost) answers it
-- instead of claiming again. One string: per finish outcome
-- "<code><run status letter>,", then "|", then "<run>:<task>:<epoch>" per
-- claimed task, space separated (run ids, task names and epochs hold
-- neither ':' nor ' ').

-- remember writes the memory of a call: the codes of its n outcomes, the
-- first 2n values of out, and the tasks in memo, for lease ms (the digits
-- the call was sent).
local function remember(mk, out, n, memo, lease)
  local codes = {}
  for i = 1, n do codes[i] = itoa(out[2 * i - 1]) .. out[2 * i] .. ',' end
  redis.call('SET', mk, table.concat(codes) .. '|' .. table.concat(memo, ' '), 'PX', lease)
end

-- replay_finish appends the outcome codes of a remembered call to out.
local function replay_finish(mem, out)
  for code, st in string.gmatch(string.match(mem, '^[^|]*'), '(%d+)(%a*),') do
    out[#out + 1] = tonumber(code)
    out[#out + 1] = st
  end
end

-- replay_claim appends a claim reply to out for a remembered call, claiming
-- nothing: the tasks it claimed that are still running under the epoch it
-- gave them, read again as claim_tasks answers them (with the lease
-- deadline as it stands), and, as the fourth head value, how many it
-- claimed in all, so that a caller claiming on several shards counts them
-- as the first call did.
local function replay_claim(ctx, active, qkeys, nq, mem, out)
  local head = #out
  out[head + 1], out[head + 2], out[head + 3], out[head + 4] = ctx.now, 0, 0, 0
  local n, all = 0, 0
  local last_run
  for id, name, epoch in string.gmatch(string.match(mem, '|(.*)$') or '', '([^ :]+):([^ :]+):(%d+)') do
    all = all + 1
    local rk = ctx.base .. 'r:' .. id
    local v = redis.call('HMGET', rk, 'm', 's:' .. name, 'd:' .. name, 'u:' .. name, 'i')
    local d, ps = v[3], v[4]
    local r = v[1] and meta_scan(v[1], scan_r)
    local t = v[2] and state_scan(v[2], scan_t)
    local deps, apart
    if d then deps, apart = def_tail(d) end
    local until_ms = redis.call('ZSCORE', active, entry(id, name))
    if r and t and deps and until_ms and t.st == 'U' and t.epoch == epoch then
      n = n + 1
      local g = #out
      out[g + 1], out[g + 2], out[g + 3], out[g + 4] = id, name, tonumber(epoch), tonumber(until_ms)
      out[g + 5], out[g + 6], out[g + 7] = d, '', ''
      if apart == '1' then out[g + 7] = redis.call('GET', ctx.base .. 'p:' .. id .. ':' .. name) or '' end
      out[g + 8], out[g + 9] = tonumber(t.attempt), r.created + t.first
      out[g + 10] = ''
      if id ~= last_run then
        last_run = id
        out[g + 10] = v[5] or ''
      end
      if deps ~= '0' then
        out[g + 6] = ps or ''
        if ctx.inline > 0 and tonumber(deps) > ctx.inline then
          out[g + 6] = ''
          out[g + 11] = -1
        else
          out[g + 11] = parent_results(rk, ps or '', out, g + 11)
        end
      else
        out[g + 11] = 0
      end
    end
  end
  out[head + 2] = next_due(ctx, qkeys, nq)
  out[head + 3] = n
  out[head + 4] = all
end
