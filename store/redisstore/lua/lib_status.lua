-- lib_status.lua: the one place a status letter changes.
--
-- Every change of a task's or a run's status letter, in every script, is
-- made by task_to or run_to below. They check the move against task_moves
-- and run_moves, which scripts.go renders from plait's status machine
-- (transition.go) and puts right before this file, together with
-- task_final, run_final and code_illegal: the table is written once, in Go.
-- The letters map to plait's statuses as follows; P and W are both pending
-- (W waits in the delayed set), so P -> W and W -> P are moves inside one
-- status and allowed:
--   task  P W pending  R ready  U running  Y retrying  S succeeded
--         F failed  K skipped  C cancelled  D dead
--   run   P pending  U running  S completed  F failed  C cancelled
--
-- A refused move changes nothing, returns nil and sets ctx.refused, so the
-- step that asked answers code_illegal however deep the refusal was. Steps
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
    ctx.off = tostring(ctx.now - created)
  end
  return ctx.off
end

-- task_to moves task name of run id (hash rk, meta r, state t) to status
-- letter to: it sets the letter, the offsets the move starts (claim and,
-- on the first claim, first start for running; end for a terminal status),
-- counts a terminal status in r and drops the payload kept in its own key
-- (nothing reads a payload once the task has ended). h is the task's
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
    ctx.refused = true
    return nil
  end
  t.st = to
  if to == 'U' then
    local off = offset(ctx, r)
    t.claim = off
    if t.first == nil or t.first == '' then t.first = off end
  elseif task_final[to] then
    t.ended = offset(ctx, r)
    if to == 'S' then r.succ = r.succ + 1
    elseif to == 'F' or to == 'D' then r.failed = r.failed + 1
    elseif to == 'K' then r.skipped = r.skipped + 1
    elseif to == 'C' then r.cancelled = r.cancelled + 1 end
    if h == nil then h = def_get(rk, name) end
    if h and h.apart then del(key(ctx.base, 'p', id, name)) end
  end
  -- Index membership and events of a task's status change belong here.
  -- Today the only index is the queues, whose entry position (tail, head,
  -- delayed due time) only the caller knows; the callers push them.
  local s = state_pack(t)
  if not packed then hset(rk, 's:' .. name, s) end
  return s
end

-- run_to moves run id (hash rk, meta r) to status letter to: it sets the
-- letter and the offset the move starts (start for running, end for a
-- terminal status). It returns the packed meta and writes it through the
-- cache unless packed is true, like task_to. A run reaching a terminal
-- status owes run_ended (lib_run.lua), which its caller sends after its
-- writes, not from here: its PEXPIRE is a write that needs no memory, and
-- sent before a script's first write that does, it would let Redis run
-- through a script it should refuse whole.
local function run_to(ctx, rk, id, r, to, packed)
  local ok = run_moves[r.st]
  if not (ok and ok[to]) then
    ctx.refused = true
    return nil
  end
  r.st = to
  if to == 'U' then
    r.started = offset(ctx, r)
  elseif run_final[to] then
    r.ended = offset(ctx, r)
  end
  -- Index membership and events of a run's status change belong here.
  local m = meta_pack(r)
  if not packed then hset(rk, 'm', m) end
  return m
end
