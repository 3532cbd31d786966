-- task_control.lua: an operator's control over one task (TaskControl): run
-- a waiting task now, skip one that has not started, cancel one that has
-- not finished.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (lease zset, delayed sets, ready
--          lists, events channel, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  run id
-- ARGV[5]  task name
-- ARGV[6]  action: run_now, skip or cancel
-- ARGV[7]  reason: the Error of the task's event, and for a skip or a
--          cancel its error field e:<task>; '' for none
--
-- Transition: every move by task_to and run_to. run_now W -> R or
-- Y -> R, the entry leaving the delayed set z:<queue> (ZREM) and going to
-- the tail of its ready list, the attempt kept; skip P/W/R/Y -> K; cancel
-- P/W/R/Y/U -> C, a running attempt losing its lease (epoch + 1, attempt
-- record "cancelled", ZREM of its entry in the lease zset, its limit slots
-- given back by task_to). A skip or a cancel releases the task's children
-- (release_children), and the run ends when that was its last open task
-- (a run never claimed goes P -> U first: pending leads nowhere else but
-- cancelled). A ready task's entry stays in its ready list and is dropped
-- by the claim that pops it (lazy deletion, as after run_cancel).
--
-- Returns {OK, then the run hash as HGETALL gives it}; {NOT_FOUND} no run
-- or no such task; {CORRUPT} a corrupt record; {TASK_CONTROL_REFUSED,
-- status letter} the action does not apply to the task's status;
-- {ILLEGAL} a refused move. Every refusal is decided before the first
-- write, so a refused control writes nothing.
--
-- Limits (lib_limit.lua): a cancelled running task gives back its slots,
-- and each slot freed puts the oldest task waiting on the key back at the
-- head of its ready list, as in run_cancel.lua.
-- Events: one per move, written last (flush_events); the reason is the
-- Error of the task's own event (the event of run_now and skip carry it
-- appended here; a cancel's reads e:<task>, which holds it).
--
-- Retried: the first call moved the task, so the resend finds it in a
-- status the action does not apply to (ready, skipped, cancelled, or the
-- run ended) and answers TASK_CONTROL_REFUSED, changing nothing.
-- Lost data: a lost run hash answers NOT_FOUND; a lost delayed or lease
-- entry makes its ZREM remove nothing; a lost ready list loses the entry
-- run_now pushed, as any lost list does, and the task stays ready out of
-- every list until its run is cancelled.
-- Out of memory: declared allow-oom, with the other control writes: it
-- ends work or moves work that is already stored forward (a run now costs
-- one list entry for one removed from a delayed set), and runs whole. On
-- the EVALSHA path the first write is the HSET of the run hash, which
-- Redis refuses alone: nothing changes.
-- Cut off: the call is atomic; a caller cut off mid-call acted or did not,
-- and RunGet tells which. A worker running a cancelled task sees its next
-- extend or finish answer STALE and stops the attempt.

local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
local rk, id, name, action, reason = KEYS[1], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
hmget(rk, {'m', 's:' .. name, 'd:' .. name, 'e:' .. name, 'c:' .. name, 'w:' .. name, 'k'})
local r = meta_get(rk)
if r == nil then return {NOT_FOUND} end
if r == false then return {CORRUPT} end
local t = state_get(rk, name)
if t == nil then return {NOT_FOUND} end
if t == false then return {CORRUPT} end
local h = def_get(rk, name)
if not h then return {CORRUPT} end

local from = t.st
local to
if action == 'run_now' then
  if from == 'W' or from == 'Y' then to = 'R' end
elseif action == 'skip' then
  if from == 'P' or from == 'W' or from == 'R' or from == 'Y' then to = 'K' end
elseif action == 'cancel' then
  if not task_terminal(from) then to = 'C' end
else
  return {INVALID}
end
if not to then return {TASK_CONTROL_REFUSED, from} end
if not task_can(from, to) then return {ILLEGAL} end

-- note_reason appends the reason to the event task_to has just buffered
-- (lib_status.lua), in place of the error field flush_events would read.
local function note_reason()
  if reason == '' then return end
  ev_errs[ev_n] = nil
  ev_join = nil -- what follows a reason is not its text
  evs[ev_n] = evs[ev_n] .. '\n' .. reason
end

-- validated: writes start here, through the cache.
if to == 'R' then
  task_to(ctx, rk, id, r, name, t, 'R', h)
  note_reason()
  set_queued(rk, name, offset(ctx, r))
  push_ready(ctx, id, name, h)
  flush()
  redis.call('ZREM', key(ctx.base, 'z', h.queue), entry(id, name))
  wake(ctx)
else
  if from == 'U' then
    t.epoch = t.epoch + 1
    attempt(rk, name, t, r, ctx.now, 'x', reason)
  end
  if reason ~= '' then hset(rk, 'e:' .. name, reason) end
  task_to(ctx, rk, id, r, name, t, to, h)
  if to == 'K' then note_reason() end
  if not release_children(ctx, rk, id, r, name, to) then return {CORRUPT} end
  local ended = false
  local done = run_done(r)
  if done and not run_terminal(r) then
    if r.st == 'P' then run_to(ctx, rk, id, r, 'U') end
    ended = run_to(ctx, rk, id, r, done) ~= nil
  end
  if not ended then meta_put(rk, r) end
  if ctx.refused then return {ILLEGAL} end
  flush()
  if from == 'U' then redis.call('ZREM', key(ctx.base, 'active'), entry(id, name)) end
  if from == 'W' or from == 'Y' then redis.call('ZREM', key(ctx.base, 'z', h.queue), entry(id, name)) end
  if ended then run_ended(ctx, rk, id, r) end
  wake(ctx)
end
local out = {OK}
for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
return out
