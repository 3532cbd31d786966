-- lib_status.lua: the one place a status letter changes.
--
-- Every change of a task's or a run's status letter, in every script, is
-- made by task_to or run_to below. They check the move against task_moves
-- and run_moves, which status_table.go renders from plait's status machine
-- (transition.go) and puts right before this file, together with
-- task_final and run_final: the table is written once, in Go.
-- The letters map to plait's statuses as follows; P and W are both pending
-- (W waits in the delayed set), so P -> W and W -> P are moves inside one
-- status and allowed:
--   task  P W pending  R ready  U running  Y retrying  S succeeded
--         F failed  K skipped  C cancelled  D dead
--   run   P pending  U running  S completed  F failed  C cancelled
--
-- Each move that changes a status is one event and moves the shard's
-- counters (note_task, note_run below), buffered and written last by
-- flush() (flush_events in lib_buffers.lua), so a step's events follow all
-- its other writes. Fast paths that pass packed=true get their events too.
--
-- The moves out of a finished status (task back to P, run back to U) are
-- in task_replay and run_replay, rendered from plait's ReplayNext, and
-- taken only by a step that sets ctx.replay: every other step checks
-- task_moves and run_moves alone, which lead nowhere from a finished
-- status, so nothing else can revive a finished task or run.
--
-- A refused move changes nothing, returns nil and sets ctx.refused, so the
-- step that asked answers ILLEGAL however deep the refusal was. Steps
-- that write before their move check it first with task_can / run_can, so
-- that a refused step writes nothing.

local function task_can(from, to)
  local m = task_moves[from]
  return m ~= nil and m[to] == true
end

local function run_can(from, to)
  local m = run_moves[from]
  return m ~= nil and m[to] == true
end

-- Events and counters (lib_buffers.lua writes them in flush_events).
-- Every move of a status, made here, is one event, buffered as a pair of
-- strings, the run id and the event, made of strings the move builds
-- anyway, so an event converts no number and joins few strings:
--   task  "<task>,<durMs>,<packed state>"
--   run   "!<packed meta>"
-- The packed state (state_pack) carries the status, attempt, epoch, claim
-- and end offsets and worker; the meta (meta_pack) the run's status,
-- counters and times; both the run's generation after the status letter
-- when above 0 (lib_codec.lua), so an event of a replayed run carries it
-- and one of a run never replayed costs nothing more; the time of every event of a call is the call's now,
-- written once per stream entry. durMs is set only for a move off running
-- that does not end the task (a retry, a crash, a hand-back): a move that
-- ends it has its duration in the state (end - claim). An error is
-- appended at the flush ("\n" and the task's error field) for a move to
-- failed, retrying, dead or cancelled. A move between two letters of one
-- status (P and W) and a task created pending make none. With stats on
-- (ctx.win > 0), the counters of the task's queue go up in the shard's hash
-- <base>st ("q:<queue>:<counter>"), and those of its run's workflow
-- ("w:<workflow>:<counter>", whose sub counts runs, in run_index), with the
-- count and the duration window of its name for the attempts that ended
-- (succeeded, failed, retried), and the counts of the minute (series).
-- run_q returns the query field q of run hash rk: ctx.q when the caller
-- put it there (a create, whose fields are not written yet, or a claim or
-- finish that read it with the record, ctx.qk naming the hash), else
-- through the cache; false for a run written before the indexes.
local function run_q(ctx, rk, creating)
  local q
  if creating or ctx.qk == rk then q = ctx.q end
  if q == nil then q = hget(rk, 'q') or false end
  return q
end

-- run_query returns q of run hash rk parsed: workflow, service, tenant
-- (each '' when the run has none), or nil for a run written before the
-- indexes (it is left out of them).
local function run_query(ctx, rk, creating)
  local q = run_q(ctx, rk, creating)
  if not q then return nil end
  return string.match(q, '^([^:]*):([^:]*):([^:]*):')
end

local ev_err = {F = true, Y = true, D = true, C = true}

-- note buffers event v of run id. In format version 8 (ctx.short), an
-- event that follows one of the same run in the call is joined to it,
-- after the byte 0x1f, the unit separator, which no name, state or
-- status letter holds (a worker id from a store's caller may hold a
-- space): one pair per run
-- for a run's adjacent moves (a create's run and root tasks, a finish's
-- task and run), whose reader splits it (streamEntry.events). Neither the
-- free-text events nor one after an error are joined: a value's error,
-- after a newline, belongs to its last event, and a pair takes no more
-- once it is 64 bytes long. ev_join (lib_buffers.lua) names the run the
-- last pair may still take events of.
local note
do
  -- unjoined are the first bytes of the events that hold free text (a task
  -- set aside or held back, a progress report, a note): never joined.
  local unjoined = {[63] = true, [37] = true, [35] = true}

  note = function(ctx, id, v, err, rk, name)
    ev_base, ev_cap, ev_win, ev_now = ctx.base, ctx.evcap, ctx.win, ctx.nows
    local n = ev_n
    ev_k = ev_k + 1
    local free = unjoined[string.byte(v, 1)]
    -- a pair takes events while it is short: the string grows by a copy
    -- per event joined, so a finish that releases thousands of a run's
    -- tasks would copy it thousands of times
    if ev_join == id and not free and #evs[n] < 64 then
      evs[n] = evs[n] .. '\31' .. v
      if err then
        ev_errs[n] = {rk, 'e:' .. name}
        ev_join = nil
      end
      return
    end
    evs[n + 1] = id
    evs[n + 2] = v
    ev_n = n + 2
    if err then ev_errs[n + 2] = {rk, 'e:' .. name} end
    if ctx.short and not (err or free) then ev_join = id else ev_join = nil end
  end
end

local function count(f, n) st_incr[f] = (st_incr[f] or 0) + n end

-- series counts one transition in the call's minute (flush_series in
-- lib_buffers.lua): ok, fail (failed or dead) and retry for tasks, rok and
-- rfail for runs; only with stats on.
local function series(c) st_min[c] = (st_min[c] or 0) + 1 end

local function note_task(ctx, rk, id, r, name, t, from, to, h, s)
  if from == '' or ((from == 'P' or from == 'W') and (to == 'P' or to == 'W')) then return end
  local dur = ''
  if from == 'U' and r and t.claim and t.claim ~= '' and (ctx.win > 0 or not task_final[to]) then
    dur = int(ctx.now - r.created - t.claim)
  end
  if dur == '' or task_final[to] then
    note(ctx, id, name .. ',,' .. s, ev_err[to], rk, name)
  else
    note(ctx, id, name .. ',' .. dur .. ',' .. s, ev_err[to], rk, name)
  end
  if ctx.win == 0 then return end
  if to == 'S' then series('ok')
  elseif to == 'F' or to == 'D' then series('fail')
  elseif to == 'Y' then series('retry') end
  if h == nil then h = def_get(rk, name) end
  if not h then return end
  local q = 'q:' .. h.queue .. ':'
  if to == 'R' and (from == 'P' or from == 'W') then
    -- a queue counts its tasks made due; a workflow its runs (run_index)
    count(q .. 'sub', 1)
  else
    -- the same counters for the queue and for the run's workflow (its
    -- name from field q; a run without one counts for its queue only)
    local wf = run_query(ctx, rk, false)
    local p, p2 = q, nil
    if wf and wf ~= '' then p2 = 'w:' .. wf .. ':' end
    -- the queue's prefix p, then the workflow's p2: no list made per task
    while p do
      if to == 'R' then
        if from == 'U' and ctx.crash then count(p .. 'crash', 1) end
      elseif to == 'U' then count(p .. 'run', 1)
      elseif to == 'S' then count(p .. 'ok', 1)
      elseif to == 'F' then count(p .. 'fail', 1)
      elseif to == 'Y' then count(p .. 'retry', 1)
      elseif to == 'D' then
        count(p .. 'dead', 1)
        if from == 'U' and ctx.crash then count(p .. 'crash', 1) end
      end
      if from == 'U' then count(p .. 'run', -1) end
      p, p2 = p2, nil
    end
  end
  if from == 'U' then
    if dur ~= '' and (to == 'S' or to == 'F' or to == 'Y') then
      count('n:' .. name, 1)
      local ds = st_durs[name]
      if not ds then
        ds = {}
        st_durs[name] = ds
      end
      ds[#ds + 1] = dur
    end
  end
end

-- waiting_head is the head of a task_waiting event of task name, state
-- t (lib_claim.lua): "?<task>", or "?<gen>:<task>" in a generation above
-- 0 (names hold no ':').
local function waiting_head(t, name)
  if t.gen == nil or t.gen == '' then return '?' .. name end
  return '?' .. t.gen .. ':' .. name
end

-- note_run writes a run's move: its status letter and generation when the
-- process writes format version 8 (ctx.short), which is all a reader
-- takes from it, else its whole packed meta m, which readers of version 7
-- expect (codec.go).
local function note_run(ctx, id, r, m)
  if ctx.short then
    note(ctx, id, '!' .. r.st .. (r.gen or ''), false)
  else
    note(ctx, id, '!' .. m, false)
  end
end

local function task_terminal(st) return task_final[st] == true end

local function run_terminal(r) return run_final[r.st] == true end

-- offset returns now as ms after the run's creation, as a string. Turning a
-- number into a string costs Lua more than the rest of a move, and the
-- moves of one step write the same offset more than once (a task's end and
-- its run's; a first claim's start, claim and the run's start), so the last
-- one is kept in ctx.
local function offset(ctx, r)
  local created = r.created
  if ctx.off_of ~= created then
    ctx.off_of = created
    ctx.off = int(ctx.now - created)
  end
  return ctx.off
end

-- task_to moves task name of run id (hash rk, meta r, state t) to status
-- letter to: it sets the letter, the offsets the move starts (claim and,
-- on the first claim, first start for running; end for a terminal status),
-- counts a terminal status in r and drops the payload kept in its own key
-- when the task succeeded (nothing reads it again). h is the task's
-- definition header, or nil to read it; r may be nil for a move to a
-- non-terminal status other than running.
--
-- It returns the packed state and writes it through the cache, unless
-- packed is true: then the caller writes the returned string itself, in the
-- one HSET of a fast path. Fields other than the status and its offsets
-- (attempt, epoch, worker...) are the caller's, set before the call. The
-- caller writes r (meta_put, run_to or a packed meta) after it.
--
-- task_to and run_to run once per task on the claim and finish paths, so
-- they check the table and count inline rather than through task_can and
-- a helper: a Lua function call costs about as much as the rest of a move.
local function task_to(ctx, rk, id, r, name, t, to, h, packed)
  local ok = task_moves[t.st]
  if not (ok and ok[to]) then
    -- The replay moves (task_replay) are taken only inside a replay.
    ok = ctx.replay and task_replay[t.st]
    if not (ok and ok[to]) then
      ctx.refused = true
      return nil
    end
    -- A replay restarts the task: the run's counters are those of the
    -- current generation, so its end no longer counts, and its claim and
    -- end offsets are the next attempt's to set.
    local from = t.st
    if from == 'S' then r.succ = r.succ - 1
    elseif from == 'F' or from == 'D' then r.failed = r.failed - 1
    elseif from == 'K' then r.skipped = r.skipped - 1
    elseif from == 'C' then r.cancelled = r.cancelled - 1 end
    t.claim, t.first, t.ended = '', '', ''
    admission_end(ctx, rk, name, 1) -- counted pending again (lib_admission.lua)
  end
  local from = t.st
  if t.st == 'U' and to ~= 'U' then
    -- The attempt ends: its limit slots go back, once (lib_limit.lua).
    limit_release(ctx, rk, id, name)
  end
  t.st = to
  if to == 'U' then
    local off = offset(ctx, r)
    t.claim = off
    if t.first == nil or t.first == '' then t.first = off end
  elseif task_final[to] then
    t.ended = offset(ctx, r)
    if to == 'S' then r.succ = itoa(r.succ + 1)
    elseif to == 'F' or to == 'D' then r.failed = r.failed + 1
    elseif to == 'K' then r.skipped = r.skipped + 1
    elseif to == 'C' then r.cancelled = r.cancelled + 1 end
    -- No longer pending (lib_admission.lua): looked at only when the
    -- shard counts tasks at all, one EXISTS per call.
    if ctx.adm_on == nil then ctx.adm_on = redis.call('EXISTS', ctx.base .. 'an') == 1 end
    if ctx.adm_on then admission_end(ctx, rk, name, -1) end
    -- A succeeded task's payload kept apart goes: nothing reads it again.
    -- One that ended otherwise stays for dead-letter inspection and a
    -- replay, and expires with its run (run_ended).
    if to == 'S' then
      if h == nil then h = def_get(rk, name) end
      if h and h.apart then del(key(ctx.base, 'p', id, name)) end
    end
  end
  -- Index membership and events of a task's status change belong here.
  -- The limit slots of an attempt are released above. The other index is
  -- the queues, whose entry position (tail, head,
  -- delayed due time) only the caller knows; the callers push them.
  local s = state_pack(t)
  note_task(ctx, rk, id, r, name, t, from, to, h, s)
  if not packed then hset(rk, 's:' .. name, s) end
  return s
end

-- run_retention returns how long run hash rk is kept after ending in
-- (ms, as a string: it goes into keys and PEXPIREs, never into sums)
-- status letter st: the rule settled at its creation (the tail of q),
-- else the store's retention (ctx.retention). A q without rules ends in
-- ':' and is not searched; the answer is kept in ctx for the run_ended of
-- the same end.
local function run_retention(ctx, rk, st)
  if ctx.ret_of == rk and ctx.ret_st == st then return ctx.ret end
  local q, ret = run_q(ctx, rk, false), ctx.rets
  if q and string.byte(q, -1) ~= 58 then
    local s, f, c = string.match(q, ':(%d+):(%d+):(%d+)$')
    if s then
      if st == 'S' then ret = s elseif st == 'F' then ret = f else ret = c end
    end
  end
  ctx.ret_of, ctx.ret_st, ctx.ret = rk, st, ret
  return ret
end

-- expiry_member is a finished run's entry in an expiry list ie:<ms>:
-- everything the pruner needs to find its index entries once the run's
-- hash is gone: "<end ms>:<run>:<status letter>:<q>", q the run's query
-- field as it stands ("<workflow>:<service>:<tenant>:" and the retention
-- rules, if any), so an end builds no string from its parts and formats no
-- number (the end is the call's now, a string already). The pruner adds
-- the list's retention to the end. Entries written before this form,
-- "<due ms>:<run>:<st>:<workflow>:<service>:<tenant>" with no ':' after the
-- tenant, are still read. Names hold no ':' (internal/ids). From format
-- version 8 the run is "<run>@<created ms>": the pruner finds the run's
-- entries in the name streams by its creation (stream_forget), its hash
-- being gone by then.
local function expiry_member(ctx, id, st, q, created)
  if ctx.short then return ctx.nows .. ':' .. id .. '@' .. created .. ':' .. st .. ':' .. q end
  return ctx.nows .. ':' .. id .. ':' .. st .. ':' .. q
end

-- run_index keeps run id's index entries as its status moves from from
-- ('' for a new run) to to. Every index is a zset of the shard scored by
-- the run's creation (ms), member the run id, but the end index and the
-- name streams. At creation the run enters the index of all runs ia and
-- the workflow, service, service-and-tenant and tenant indexes it has
-- (names.add, lib_names.lua: streams xw, xs, xu, xv from format version 8,
-- zsets iw, is, iu, iv before): those never move. A pending run is in no
-- status index (pending = all less the others); a running one is in it:U
-- (with the skiplist pin, common.lua), a finished one in it:<S|F|C>, and
-- in the end index if:<S|F|C> scored by its end (the call's now, a string
-- already), which answers "failed in the last day" by ZRANGEBYSCORE and
-- ZCOUNT; a replay takes it out of both (run_to). A finished run also
-- goes at the tail of the expiry list of its retention, ie:<ms>
-- (registered in the set iel), whose head the pruner (run_prune.lua) pops
-- once due: runs end in the order of the clock, so a list per retention
-- stays in expiry order and a push costs less than a zset insert. The cost
-- per run: a ZADD and an XADD at creation (one more XADD with a service or
-- a tenant, three with both), one ZADD at its first claim, a ZREM, two
-- ZADDs and an RPUSH at its end. Only a creation splits q into its names:
-- a status move needs the run id and its creation alone.
local function run_index(ctx, rk, id, r, from, to)
  local q = run_q(ctx, rk, from == '')
  if not q then return end
  -- the creation time as read when the record was parsed (a number would
  -- be turned into a string by each ZADD)
  local b, created = ctx.base, r.created_s or r.created
  if from == '' then
    local wf, svc, tenant = string.match(q, '^([^:]*):([^:]*):([^:]*):')
    if not wf then return end
    if ctx.win > 0 and wf ~= '' then count('w:' .. wf .. ':sub', 1) end
    index_add(ctx, key(b, 'ia'), created, id)
    if wf ~= '' then names.add(ctx, 'w', wf, created, id) end
    if svc ~= '' then
      names.add(ctx, 's', svc, created, id)
      if tenant ~= '' then names.add(ctx, 'u', svc .. ':' .. tenant, created, id) end
    end
    if tenant ~= '' then names.add(ctx, 'v', tenant, created, id) end
  end
  if from == 'U' then redis.call('ZREM', key(b, 'it', 'U'), id) end
  if to == 'U' then
    redis.call('ZADD', key(b, 'it', 'U'), '-1', skiplist_pin, created, id)
  elseif run_final[to] then
    redis.call('ZADD', key(b, 'it', to), created, id)
    redis.call('ZADD', key(b, 'if', to), ctx.nows, id)
    if ctx.retention > 0 then
      local ret = run_retention(ctx, rk, to)
      if redis.call('RPUSH', key(b, 'ie', ret), expiry_member(ctx, id, to, q, created)) == 1 then
        redis.call('SADD', key(b, 'iel'), ret)
      end
    end
  end
end

-- run_to moves run id (hash rk, meta r) to status letter to: it sets the
-- letter and the offset the move starts (start for running, end for a
-- terminal status). It returns the packed meta and writes it through the
-- cache unless packed is true, like task_to. It moves the run's entries in
-- the query indexes (run_index). A run reaching a terminal
-- status owes run_ended (lib_run.lua), which its caller sends after its
-- writes, not from here: its PEXPIRE is a write that needs no memory, and
-- sent before a script's first write that does, it would let Redis run
-- through a script it should refuse whole.
local function run_to(ctx, rk, id, r, to, packed)
  local ok = run_moves[r.st]
  local from = r.st
  if not (ok and ok[to]) then
    -- The replay moves (run_replay) are taken only inside a replay: the
    -- run leaves its finished status and end indexes (run_index adds it
    -- to it:U);
    -- its end is the next generation's to set. Its expiry list entry
    -- stays behind; the pruner skips a run that is no longer finished.
    ok = ctx.replay and run_replay[r.st]
    if not (ok and ok[to]) then
      ctx.refused = true
      return nil
    end
    if not ctx.index_later then
      redis.call('ZREM', key(ctx.base, 'it', from), id)
      redis.call('ZREM', key(ctx.base, 'if', from), id)
    end
    r.ended = ''
  end
  r.st = to
  if to == 'U' then
    r.started = offset(ctx, r)
  elseif run_final[to] then
    r.ended = offset(ctx, r)
    if ctx.win > 0 then
      if to == 'S' then series('rok') elseif to == 'F' then series('rfail') end
    end
  end
  -- The query indexes move with the status, here and nowhere else. A
  -- create's fast path writes them after its first write (ctx.index_later),
  -- since its moves are made before it has validated its roots.
  if ctx.index_later then
    ctx.index_later = {from, to}
  else
    run_index(ctx, rk, id, r, from, to)
  end
  local m = meta_pack(r)
  note_run(ctx, id, r, m)
  if not packed then hset(rk, 'm', m) end
  return m
end
