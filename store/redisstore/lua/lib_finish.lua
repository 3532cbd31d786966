-- lib_finish.lua: the finish step, shared by task_finish.lua and
-- task_finish_claim.lua, and lease_sweep.lua's failure path: an attempt's
-- outcome applied to its task, the edges out of a task that ended, and the
-- run's end.
--
-- Per-event work is bounded by the task's own edges: a finishing task reads
-- its children (c:), each pending child's state and definition header; the
-- parents list (u:) is read only when the task is claimed. No step reads a
-- list whose length grows with the run.

-- met mirrors plait.Condition.Met: cond '0' OnSuccess, '1' OnCompletion,
-- '2' OnFailure; under strategy skip a failed or dead parent counts as skipped.
local function met(cond, ps, strat)
  if strat == 'k' and (ps == 'F' or ps == 'D') then ps = 'K' end
  if cond == '0' then return ps == 'S' end
  if cond == '2' then return ps == 'F' or ps == 'D' end
  if cond == '1' then return ps == 'S' or ps == 'F' or ps == 'D' or ps == 'K' end
  return false
end

-- release_children resolves the edges out of a task that just ended, and of
-- every task skipped as a consequence, with a worklist (no recursion).
-- Returns false when a record on the way cannot be read or a move is
-- refused.
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
            if not make_due(ctx, rk, id, r, e.name, c, ch) then return false end
          elseif skip then
            if not task_to(ctx, rk, id, r, e.name, c, 'K', ch) then return false end
            work[#work + 1] = {name = e.name, st = 'K'}
          else
            state_put(rk, e.name, c)
            -- ctx.left: the fewest parents a join on all of them, left
            -- pending by this call, still waits on (task_finish_claim.lua
            -- answers it: TaskFinishClaimResult.ParentsLeft)
            if ch.join ~= '1' then
              local left = ch.deps - c.resolved
              if not ctx.left or left < ctx.left then ctx.left = left end
            end
          end
        end
      end
    end
  end
  return true
end

-- fail_task ends t as failed or dead, dead-letters it (RPUSH to the run's
-- dead-letter list x:<run>, ZADD to the shard's index dl, scored by now)
-- and applies the run's error strategy.
local function fail_task(ctx, rk, id, r, name, t, st, h)
  if not task_to(ctx, rk, id, r, name, t, st, h) then return false end
  redis.call('RPUSH', key(ctx.base, 'x', id), name)
  redis.call('ZADD', key(ctx.base, 'dl'), ctx.nows, entry(id, name))
  if r.strat == 's' then return stop_run(ctx, rk, id, r, 'F', '') end
  return release_children(ctx, rk, id, r, name, st)
end

-- fast_h is finish_fast's definition header, reused like scan_r.
local fast_h = {}

-- finish_fast applies outcome succeeded to a running task of the current
-- epoch (a digit string, as the state spells it) in a run that is not over. It returns nil, having written nothing,
-- for every other case; the fields it read are then in the cache for
-- finish_one.
--
-- When this call has not cached the run hash yet and the task has no
-- children, what it reads (one HMGET) is current: both moves are made
-- packed, on the scanned records, before the first write, and it writes at
-- once, one HSET. Otherwise it reads and writes through the cache, and a
-- task with children releases them with release_children.
local function finish_fast(ctx, active, rk, id, name, epoch, result, err)
  local sf, df, ef, cf, wf = 's:' .. name, 'd:' .. name, 'e:' .. name, 'c:' .. name, 'w:' .. name
  local lf = 'l:' .. name
  local ch = hcache[rk]
  local m, s, d, e, c, k, q, w, tl
  if ch then
    hmget(rk, {'m', sf, df, ef, cf, 'k', 'q', wf, lf, 'tl'})
    m, s, d, e, c, k, q, w = ch.m, ch[sf], ch[df], ch[ef], ch[cf], ch.k, ch.q, ch[wf]
  else
    -- tl: whether the run has a log hash, for run_ended
    local v = redis.call('HMGET', rk, 'm', sf, df, ef, cf, 'k', 'q', wf, lf, 'tl')
    m, s, d, e, c, k, q, w, tl = v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[10] or false
    if c then
      ch = hfields(rk)
      ch.m, ch[sf], ch[df], ch[ef], ch[cf], ch.k, ch.q, ch[wf], ch.tl = m, s, d, e, c, k, q or false, w or false, tl
    end
    -- the task's limits (l:), which limit_release reads as the attempt
    -- ends: from here, not in an HGET of its own
    hfields(rk)[lf] = v[9] or false
  end
  -- run_index and run_retention read the indexes' field from here.
  ctx.qk, ctx.q = rk, q or false
  local r = m and meta_scan(m, scan_r)
  local t = s and state_scan(s, scan_t)
  local hend, _
  if r and t and d and (r.st == 'P' or r.st == 'U') and t.st == 'U' and t.epoch == epoch then
    local _, apart = def_tail(d)
    if apart then hend = string.find(d, '\n', 1, true) end
  end
  if not hend then
    if not ch then
      ch = hfields(rk)
      ch.m, ch[sf], ch[df], ch[ef], ch[cf], ch.k, ch.q, ch[wf], ch.tl = m or false, s or false, d or false,
        e or false, c or false, k or false, q or false, w or false, tl or false
    end
    return nil
  end
  if ch then
    -- through the cache, where later steps of this call find the records.
    r, t = meta_parse(m), state_parse(s)
  end

  -- The moves, before the first write: a refused one writes nothing.
  local h = fast_h
  h.apart = string.byte(d, hend - 1) == 49
  if ctx.win > 0 then h.queue = string.match(d, '^[^,\n]+') end
  local claim = t.claim
  if claim == nil or claim == '' then claim = 0 end
  local ns = task_to(ctx, rk, id, r, name, t, 'S', h, not ch)
  if not ns then return ILLEGAL, r.st end
  local nm, ended
  if not ch then
    local to = run_done(r)
    if to then
      nm = run_to(ctx, rk, id, r, to, true)
      if not nm then return ILLEGAL, r.st end
      ended = true
    else
      nm = meta_pack(r)
    end
  end

  -- validated: writes start here, with the lease entry.
  unlease_now(active, entry(id, name))
  err = err or ''
  -- The attempt record, in its field named by the epoch as the state
  -- spells it; none for a success without error text in a run of format
  -- version 8 on (the byte after the header line of d:), whose state is
  -- the record (folded, lib_codec.lua).
  local af, rec
  local v = string.byte(d, hend + 1)
  if err ~= '' or not v or v < 8 then
    af = 'a:' .. name .. ':' .. t.epoch
    rec = record_head(t.attempt, t.epoch, claim, int(t.ended - claim), 's' .. (t.gen or ''), #t.worker, #err, nil, w or nil) ..
      t.worker .. err
  end

  if ch then
    -- through the cache: the task's fields, its children, then the meta.
    if rec then hset(rk, af, rec) end
    if result ~= '' then hset(rk, 'r:' .. name, result) end
    if e then hdel(rk, ef) end
    release_children(ctx, rk, id, r, name, 'S')
    if not finish_run(ctx, rk, id, r) then meta_put(rk, r) end
    if ctx.refused then return ILLEGAL, r.st end
    return OK, r.st
  end

  if rec then
    if result ~= '' then
      redis.call('HSET', rk, sf, ns, af, rec, 'm', nm, 'r:' .. name, result)
    else
      redis.call('HSET', rk, sf, ns, af, rec, 'm', nm)
    end
  elseif result ~= '' then
    redis.call('HSET', rk, sf, ns, 'm', nm, 'r:' .. name, result)
  else
    redis.call('HSET', rk, sf, ns, 'm', nm)
  end
  if e then redis.call('HDEL', rk, ef) end
  if ended then run_ended(ctx, rk, id, r, k, tl) end
  return OK, r.st
end

-- finish_one applies one outcome (1 succeeded, 2 retry, 3 failed,
-- 4 released, 5 returned) and returns a code (OK applied, NOT_FOUND, STALE
-- epoch, CORRUPT record, ILLEGAL refused move) and the run's status letter
-- after it. epoch is the digit string the caller sent: the fast path
-- compares it with the state's own digits, the others as a number.
local function finish_one(ctx, active, rk, id, name, epoch, outcome, result, err, delay, timed)
  ctx.refused = nil
  if outcome == 1 then
    local code, st = finish_fast(ctx, active, rk, id, name, epoch, result, err)
    if code then return code, st end
  end
  epoch = tonumber(epoch)
  hmget(rk, {'m', 's:' .. name, 'd:' .. name, 'e:' .. name, 'c:' .. name, 'k', 'tl'})
  local r = meta_get(rk)
  if r == nil then return NOT_FOUND, '' end
  if r == false then return CORRUPT, '' end
  local t = state_get(rk, name)
  if t == nil then return NOT_FOUND, r.st end
  if t == false then return CORRUPT, r.st end
  if t.st ~= 'U' or t.epoch ~= epoch then return STALE, r.st end
  local h, d = def_get(rk, name)
  if not h then return CORRUPT, r.st end
  local to = 'R'
  if outcome == 1 then to = 'S'
  elseif outcome == 3 then to = 'F'
  elseif outcome == 2 and delay > 0 then to = 'Y' end
  if not task_can(t.st, to) then return ILLEGAL, r.st end

  -- validated: writes start here (the lease entry goes first, at the flush).
  unlease(active, entry(id, name))
  if outcome == 1 then
    -- folded: no record for a success without error text (lib_codec.lua)
    if (err ~= nil and err ~= '') or not folded(d) then attempt(rk, name, t, r, ctx.now, 's', err) end
    if result ~= '' then hset(rk, 'r:' .. name, result) end
    if hget(rk, 'e:' .. name) then hdel(rk, 'e:' .. name) end
    task_to(ctx, rk, id, r, name, t, 'S', h)
    release_children(ctx, rk, id, r, name, 'S')
  elseif outcome == 2 then
    attempt(rk, name, t, r, ctx.now, timed and 't' or 'r', err, delay)
    hset(rk, 'e:' .. name, err)
    t.attempt = t.attempt + 1
    task_to(ctx, rk, id, r, name, t, to, h)
    if to == 'Y' then
      set_queued(rk, name, int(ctx.now + delay - r.created))
      push_delayed(ctx, id, name, h, ctx.now + delay)
    else
      set_queued(rk, name, offset(ctx, r))
      push_ready(ctx, id, name, h)
    end
  elseif outcome == 3 then
    -- folded: no record for a failure the task's Timeout did not cause;
    -- its error stays in e:<task> (lib_codec.lua)
    if timed or not folded(d) then attempt(rk, name, t, r, ctx.now, timed and 't' or 'f', err) end
    hset(rk, 'e:' .. name, err)
    fail_task(ctx, rk, id, r, name, t, 'F', h)
  elseif outcome == 4 then
    -- released: a task that held a slot keeps its place (limit_keep).
    attempt(rk, name, t, r, ctx.now, 'l', err)
    t.epoch = t.epoch + 1
    local kept = limit_keep(ctx, rk, id, name)
    task_to(ctx, rk, id, r, name, t, 'R', h)
    set_queued(rk, name, offset(ctx, r))
    if kept then
      push_front(ctx, id, name, h)
    else
      push_ready(ctx, id, name, h)
    end
  else
    -- returned unstarted: no record; a first claim is undone; its slots
    -- stay its own (limit_keep).
    t.epoch = t.epoch + 1
    if not has_attempts(rk, name, t, epoch) then
      t.attempt = 0
      t.first = nil
    end
    limit_keep(ctx, rk, id, name)
    task_to(ctx, rk, id, r, name, t, 'R', h)
    push_front(ctx, id, name, h)
  end
  if not run_terminal(r) and not finish_run(ctx, rk, id, r) then meta_put(rk, r) end
  if ctx.refused then return ILLEGAL, r.st end
  return OK, r.st
end

-- outcome_codes are the outcome arguments of outcomes not caused by a
-- timeout, looked up instead of parsed: finish_batch reads one per task.
local outcome_codes = {['1'] = 1, ['2'] = 2, ['3'] = 3, ['4'] = 4, ['5'] = 5}

-- finish_batch applies n outcomes, each on its own; rks[i] is the run hash
-- of the i-th outcome and its arguments start at ARGV[first + 7(i-1)]: run
-- id, task, epoch, outcome (its code, followed by 't' for a retry or
-- failure the task's Timeout caused), result, error, retry delay in ms. It
-- appends two values per outcome to out: the code and the run's status
-- letter.
local function finish_batch(ctx, active, rks, ARGV, first, n, out)
  for i = 1, n do
    local a = first + 7 * (i - 1)
    local oa, dl = ARGV[a + 3], ARGV[a + 6]
    local oc, timed = outcome_codes[oa], false
    if not oc then oc, timed = tonumber(string.match(oa, '^(%d+)t$')), true end
    if dl == '0' then dl = 0 else dl = tonumber(dl) or 0 end
    local code, st = finish_one(ctx, active, rks[i], ARGV[a], ARGV[a + 1], ARGV[a + 2], oc, ARGV[a + 4],
      ARGV[a + 5], dl, timed)
    out[#out + 1] = code
    out[#out + 1] = st
  end
end
