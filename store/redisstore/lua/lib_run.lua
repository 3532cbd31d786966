-- lib_run.lua: what every writer of a run shares: a pending task made due,
-- and a run that ends, by its last task or by a stop.
--
-- A run's end wakes its RunWait callers through the one PUBLISH to
-- <prefix>:ev a call makes for its events (flush_events, lib_buffers.lua):
-- its message is "e", then " <run> <status letter>" per run the call
-- ended, and each process's hub routes it to the waiters of the runs it
-- names (hub.go), so a call ending 64 runs sends one PUBLISH, not 65.
-- Retried: a resent call that ends nothing names nothing; its waiters read
-- the run once subscribed, so they saw the first call's end.
-- Lost data: a run whose end Redis lost is not ended and wakes nobody; a
-- message lost with a connection is made up by the hub, whose waiters
-- read their runs again at every reconnect.
-- Out of memory: a PUBLISH needs no memory, and the step's first write
-- has been accepted before it.
-- Cut off: a worker's step ended the run and named it, or did neither.
-- Rolling upgrade: a plait before this one published "<status letter>" to
-- <prefix>:{s}:w:<run> per run it ended and "1" to <prefix>:ev. Its
-- RunWait, subscribed to w:<run>, hears nothing when an upgraded process
-- ends the run: it has no poll, so it returns when its context ends or its
-- process is stopped for the upgrade, and the end is not lost (RunWait in
-- an upgraded process reads it). An upgraded hub takes a "1" from a process
-- not yet upgraded as "any run may have ended": each of its RunWait calls
-- reads its run again, exact at one read per waiter per such call while
-- the versions overlap.

-- make_due schedules a task whose dependencies are met: due at
-- max(now, runAt, created + delay); ready at once when due <= now, else
-- pending in the delayed set (W). Returns false, having written nothing,
-- when the move is refused.
local function make_due(ctx, rk, id, r, name, t, h)
  local due = ctx.now
  if h.runat > 0 and h.runat > due then due = h.runat end
  if h.delay > 0 and r.created + h.delay > due then due = r.created + h.delay end
  if due <= ctx.now then
    if not task_to(ctx, rk, id, r, name, t, 'R', h) then return false end
    set_queued(rk, name, offset(ctx, r))
    push_ready(ctx, id, name, h)
  else
    if not task_to(ctx, rk, id, r, name, t, 'W', h) then return false end
    set_queued(rk, name, int(due - r.created))
    push_delayed(ctx, id, name, h, due)
  end
  return true
end

-- dead_grace is how much longer than its run (ms) a run's dead-letter
-- list x:<run> is kept: the pruner reads it to take the run's letters out
-- of the shard's index dl (forget_run), and the janitor comes by after
-- the run's hash has expired, not at that instant.
local dead_grace = 3600000

-- run_ended is sent once when a run has reached a terminal status, after
-- the writes of the step that ended it: every key it owns starts its
-- retention (the rule its field q settled at creation, see
-- run_retention), whatever the status it ended in, and RunWait callers
-- wake up: the run's id and status ride in the message the call publishes
-- to <prefix>:ev anyway (flush_events, lib_buffers.lua), one PUBLISH per
-- call however many runs it ends (see the top of this file). Nothing is
-- stored per finished run for the waiters. k is the run's idempotency key
-- (false: none), or nil to read it; tl is the run's field tl (false:
-- none), or nil to read it.
local function run_ended(ctx, rk, id, r, k, tl)
  if ev_base ~= nil then
    -- the end's move buffered an event: the run rides in the call's one
    -- message (flush_events)
    local n = ended_n
    ended[n + 1], ended[n + 2] = id, r.st
    ended_n = n + 2
  else
    -- a step that flushed its events before it sent run_ended (stop_run,
    -- task_control): a message of its own
    redis.call('PUBLISH', string.match(ctx.base, '^(.*):{') .. ':ev', 'e ' .. id .. ' ' .. r.st)
  end
  if ctx.retention > 0 then
    local ret = run_retention(ctx, rk, r.st)
    redis.call('PEXPIRE', rk, ret)
    -- a run keeps keys of its tasks that did not succeed: failed, dead,
    -- cancelled or skipped (meta_counts' second count, not its first,
    -- the failed alone: a cancelled or skipped task keeps its payload too)
    local _, unsucceeded = meta_counts(r)
    if unsucceeded > 0 then
      redis.call('PEXPIRE', key(ctx.base, 'x', id), int(tonumber(ret) + dead_grace))
      -- the payloads kept apart of those tasks (only runs of at most
      -- apart_max_tasks tasks keep payloads apart)
      if tonumber(r.total) <= apart_max_tasks then
        for name in string.gmatch(hget(rk, 'o') or '', '[^ ]+') do
          redis.call('PEXPIRE', key(ctx.base, 'p', id, name), ret)
        end
      end
    end
    -- the lines its tasks logged, only when any did: task_log_append
    -- marks the run with field tl when it makes the log hash, so a run
    -- without logs sends no PEXPIRE. A log hash made before that mark
    -- existed leaves with its run (forget_run, at the end of its
    -- retention).
    if tl == nil then tl = hget(rk, 'tl') end
    if tl then redis.call('PEXPIRE', key(ctx.base, 'tl', id), ret) end
    if k == nil then k = hget(rk, 'k') end
    if k then redis.call('PEXPIRE', key(ctx.base, 'k', k), ret) end
    -- its attempt records, when kept longer than the run (keep_history)
    if ctx.hist > 0 and ctx.hist > tonumber(ret) then keep_history(rk, key(ctx.base, 'h', id), ctx.hist) end
  end
end

-- run_done reports whether every task of r is terminal, and the status the
-- run then ends in: failed when a task failed, unless the strategy is skip.
local function run_done(r)
  local failed, other = meta_counts(r)
  if r.succ + other < r.total + 0 then return nil end
  if failed > 0 and r.strat ~= 'k' then return 'F' end
  return 'S'
end

-- finish_run ends the run once every task is terminal; it returns true
-- when it did (and wrote m).
local function finish_run(ctx, rk, id, r)
  if run_terminal(r) then return false end
  local to = run_done(r)
  if not to or not run_to(ctx, rk, id, r, to) then return false end
  run_ended(ctx, rk, id, r)
  return true
end
