-- run_create_many.lua: store many new runs of one shard in one call
-- (RunCreateMany), each as run_create.lua stores a run sent whole.
--
-- KEYS  per run, in ARGV's order: <prefix>:{s}:r:<run> (run hash), then,
--       for a keyed run only, <prefix>:{s}:k:<key> (idempotency key index)
-- ARGV[1]  the step argument, as run_create.lua's
-- ARGV[2]  shard base "<prefix>:{s}:"
-- ARGV[3..]  per run: 1 when keyed, else 0; then run_create.lua's
--          ARGV[3..] for the run: id, strategy letter, number of tasks, 0
--          (no parts: a run sent in parts goes through run_create.lua),
--          f, nr, np, the nr root names, the f field/value pairs, the np
--          task/payload pairs
--
-- Transition: per run, as run_create.lua's: run (new) -> P; root tasks
-- P -> R (due now) or P -> W (due later); the run enters the query
-- indexes of its shard. The runs are written one after another in ARGV's
-- order, each in its own HSET (its first write); the ready entries of all
-- of them are pushed after the last, one RPUSH per list, in that order.
--
-- Admission: as run_create.lua's, run by run, the runs admitted earlier
-- in the call counted before the next is checked: a run refused answers
-- {ADMISSION, "<q:queue or t:tenant>:<cap>:<pending>:<tasks>"} and writes
-- nothing, and the call goes on with its next run.
--
-- Returns one pair per run, in ARGV's order: {OK, createdMs} when created
-- (also when this very id exists: an earlier try of the same call),
-- {KEY_TAKEN, existingRunId} when its key names another run (an earlier
-- run of this very call too), {CORRUPT, ''} when a root's definition or
-- state is unreadable, {ILLEGAL, ''} when a move is refused. A run
-- answered otherwise than created wrote nothing: create_run checks before
-- it writes or buffers anything, so the other runs of the call are
-- written as if it had not been sent.
--
-- Events: run_pending and one per root made due (R) for each run written,
-- all in one XADD to <base>e, then one PUBLISH, as run_create.lua's, after
-- every run's fields; wake tokens once per queue for the whole call.
-- Queue registry: as run_create.lua's.
-- Retried: a run under its id exists (field m): it answers {OK,
-- createdMs} of the first try and changes nothing; a keyed run finds its
-- own id in its key index and answers the same. So a resend of a call whose
-- reply was lost answers every run created, as the first try did, and
-- writes nothing; runs found are not checked against the caps again. A
-- run the first try refused for a cap is checked again, against the counts
-- as they are. Ids are handed out once (ids.go): a run under one can
-- only be this call's. A name stream entry is written for the runs the
-- call writes, so a resend that finds them all writes none.
-- Lost data: as run_create.lua's, run by run: a run Redis lost is written
-- again under its id by a resend; a keyed run whose key index was lost is
-- created anew under its key.
-- Out of memory: refused as a whole, never run by run. The function is
-- declared without allow-oom, so Redis refuses the call up front and
-- nothing is written; every run of the call answers store.ErrStoreFull.
-- On the EVALSHA path the first write of the call is the HSET of its first
-- run not found, which Redis refuses, and the script stops there: nothing
-- is written either.
-- Cut off: the call is atomic: a caller cut off mid-call created all of
-- its new runs or none. A resend of the same call (same ids) answers each
-- run once (Retried); a new RunCreateMany takes new ids, so only keyed
-- runs keep a caller that tries again to one run each.

local ctx = new_ctx(ARGV[2], ARGV[1])
ctx.zadds = {}
local lists, order = {}, {}
local out = {}
local nargs = #ARGV
-- the runs' hashes, each named by the first of its keys
local rks, keyed, at = {}, {}, {}
local k, a = 1, 3
while a <= nargs do
  local n = #rks + 1
  rks[n], at[n] = KEYS[k], a
  if ARGV[a] == '1' then
    keyed[n] = KEYS[k + 1]
    k = k + 2
  else
    k = k + 1
  end
  local o = a + 1
  a = o + 7 + tonumber(ARGV[o + 5]) + 2 * tonumber(ARGV[o + 4]) + 2 * tonumber(ARGV[o + 6])
end
-- none of them exists, the usual case (a first try): no run is looked up
-- on its own.
-- The same EXISTS answers whether the shard has caps (lib_admission.lua),
-- the usual answer being no.
local none, capped = false, false
if #rks > 0 then
  local found = redis.call('EXISTS', ctx.base .. 'ac', unpack(rks))
  if found > 0 then
    capped = redis.call('EXISTS', ctx.base .. 'ac') == 1
    if capped then found = found - 1 end
  end
  none = found == 0
end
for n, rk in ipairs(rks) do
  local kk, o = keyed[n], at[n] + 1
  local code, v = create_found(rk, kk, ARGV[o], none)
  local adm
  if not code and capped then adm, v = admission_check(ctx, ARGV, o, rk, 0) end
  if adm == false then
    code = ADMISSION
  elseif not code then
    code = create_run(ctx, rk, kk, ARGV, o, lists, order)
    if code then v = '' else code, v = OK, ctx.now end
    if adm and code == OK then admission_count(ctx, rk, adm) end
  end
  out[2 * n - 1] = code
  out[2 * n] = v
end
index_flush(ctx)
push_created(ctx.base, lists, order)
flush_events()
wake(ctx)
return out
