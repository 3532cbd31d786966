-- run_create.lua: store a new run (or commit one whose fields earlier
-- run_create_part.lua calls wrote) and make its root tasks ready or delayed.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash (no field m yet)
-- KEYS[2]  <prefix>:{s}:k:<key>   idempotency key index (only for keyed runs)
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (ready, delayed and wake keys of root
--          tasks, payload keys)
-- ARGV[3]  run id
-- ARGV[4]  strategy letter (c continue, s stop, k skip)
-- ARGV[5]  number of tasks
-- ARGV[6]  number of hash fields earlier parts wrote (0: none)
-- ARGV[7]  number of hash fields f (pairs) in this call
-- ARGV[8]  number of root tasks nr
-- ARGV[9]  number of payloads kept in their own key np
-- ARGV[10..]  nr root task names, then f field/value pairs (o, i, q, k,
--          d:<task>, s:<task>, u:<task>, c:<task> ...), then np pairs
--          task, payload
--
-- Transition: run (new) -> P; root tasks P -> R (due now) or P -> W (due
-- later: run-at time or delay); the other tasks stay P as the Go side
-- encoded them. The run enters the query indexes of its shard (ia, and
-- iw, is, iu as its field q names them; see run_index in lib_status.lua),
-- after the first write.
--
-- Admission: when the shard has caps (lib_admission.lua), a new run that
-- would take its tenant or a queue over its cap answers {ADMISSION,
-- "<q:queue or t:tenant>:<cap>:<pending>:<tasks>"} before any write (the
-- parts of a run sent in parts are deleted); one admitted against a cap
-- gets field ad and its tasks counted in an, after its first write.
--
-- Returns {OK, createdMs} when created (also when this very id was created
-- by an earlier try of the same call), {KEY_TAKEN, existingRunId} when the
-- key is taken (the parts of this id are deleted), {CORRUPT, ''} when parts
-- are missing (they
-- expired before the commit; whatever is left is deleted) or a root's state
-- is unreadable, {ILLEGAL, ''} when a move is refused (before any
-- write on the common path).
--
-- Events: run_pending and one per root made due (R), written after the
-- run's fields (flush_events, lib_buffers.lua): one XADD of them all to
-- <base>e (MAXLEN ~ cap), with WithStats HINCRBY of <base>st, one PUBLISH
-- to <prefix>:ev; a retry that finds the run writes none. They are never
-- the first write, so a create Redis refuses for memory writes none either.
-- Queue registry: a push that makes a queue's ready list or delayed set
-- go from empty to non-empty adds the queue to the shard's registry qn
-- (SADD, register_queue in lib_buffers.lua; QueueList reads it). A resend
-- adds it again to no effect; Redis full refuses it with the script's
-- other writes, as below; a registry Redis lost is written again by the
-- next such push, and lists nothing meanwhile.
-- Retried: the run exists (field m), so the retry answers {OK, createdMs}
-- of the first try and changes nothing: it never reaches the index
-- writes, so its name stream entries are filed once (an XADD again would
-- file the run twice; TestLostCreateReplyFilesOnce); a keyed
-- retry finds its own id in the key index and answers the same. Both
-- answer before the caps are checked: a run created is never refused by
-- its resend, nor counted twice. A run refused for a cap wrote nothing,
-- so its resend is checked again, against the counts as they are then.
-- A run under this id can only be this call's: the id carries the nonce of its
-- store value's block and is handed out once (ids.go), so even after Redis
-- lost data no other create holds it, and no earlier run can have had it.
-- Lost data: ids stay unique across the loss (above). The caps and counts
-- of a shard are lost with its runs, and roll back with them on a
-- failover (one script's writes replicate together): counts stay those
-- of the runs kept; caps lost are gone until AdmissionSet writes them
-- again. A retry that reaches
-- a Redis that lost the first try's run writes the run again under the
-- same id, still this call's. A keyed create whose key index was lost
-- creates a new run under the key. A run sent in parts whose parts were
-- lost before the commit answers CORRUPT and deletes what is left: the
-- create fails and no run is written. A name stream that holds a later id
-- than the create's now (lost, then written again by a faster clock)
-- takes the run at its next id (lib_names.lua).
-- Out of memory: the function is declared without allow-oom, so Redis
-- refuses the call up front and nothing is written. On the EVALSHA path
-- (and for the commit of a run sent in parts) the first write is the HSET
-- of the run's fields, which Redis refuses: nothing is written (parts of a
-- large run stay until their time to live ends). Deleting the parts of a
-- taken key, of a broken commit or of a run refused for a cap frees
-- memory and is allowed; field ad and the counts of a run admitted are
-- written after its first write.
-- Cut off: the call is atomic: a caller cut off mid-call created the run
-- whole or not at all. A resend of the same call (same id) answers the one
-- run (Retried); a new RunCreate takes a new id, so only a keyed create
-- keeps a caller that tries again to one run.

local rk = KEYS[1]
local id = ARGV[3]
local prior = tonumber(ARGV[6])

-- The common case, an unkeyed run sent whole that does not exist yet, is
-- written by create_run (lib_create.lua), the run_create_many.lua path too.
-- One EXISTS answers whether the run's hash exists and whether the shard
-- has caps (lib_admission.lua), the usual answer being neither.
local found = redis.call('EXISTS', rk, ARGV[2] .. 'ac')
local capped = false
if found > 0 then
  capped = redis.call('EXISTS', ARGV[2] .. 'ac') == 1
  if capped then found = found - 1 end
end
if prior == 0 and not KEYS[2] and (found == 0 or redis.call('HEXISTS', rk, 'm') == 0) then
  local ctx = new_ctx(ARGV[2], ARGV[1])
  local adm, why
  if capped then adm, why = admission_check(ctx, ARGV, 3, rk, 0) end
  if adm == false then return {ADMISSION, why} end
  local lists, order = {}, {}
  local code = create_run(ctx, rk, nil, ARGV, 3, lists, order)
  if code then return {code, ''} end
  if adm then admission_count(ctx, rk, adm) end
  push_created(ctx.base, lists, order)
  flush_events()
  wake(ctx)
  return {OK, ctx.now}
end
if KEYS[2] then
  local old = redis.call('GET', KEYS[2])
  if old then
    if old == id then
      local r = meta_get(rk)
      if r then return {OK, int(r.created)} end
    end
    if prior > 0 and not redis.call('HGET', rk, 'm') then redis.call('DEL', rk) end
    return {KEY_TAKEN, old}
  end
end
local r = meta_get(rk)
if r then return {OK, int(r.created)} end
if prior > 0 and redis.call('HLEN', rk) ~= prior then
  redis.call('DEL', rk)
  return {CORRUPT, ''}
end

local ctx = new_ctx(ARGV[2], ARGV[1])
local nf = tonumber(ARGV[7])
local nroots = tonumber(ARGV[8])
local np = tonumber(ARGV[9])
local first = 10 + nroots
r = {st = '', total = tonumber(ARGV[5]), succ = 0, failed = 0, skipped = 0, cancelled = 0,
  created = ctx.now, started = nil, ended = nil, strat = ARGV[4]}
if not run_can(r.st, 'P') then return {ILLEGAL, ''} end
local adm, why
if capped then adm, why = admission_check(ctx, ARGV, 3, rk, prior) end
if adm == false then
  if prior > 0 then redis.call('DEL', rk) end
  return {ADMISSION, why}
end

-- first write: the fields, in chunks that stay under Lua's unpack limit.
local i = first
local last = first + 2 * nf - 1
while i <= last do
  local j = math.min(i + 999, last)
  local args = {}
  for a = i, j do args[#args + 1] = ARGV[a] end
  redis.call('HSET', rk, unpack(args))
  i = j + 1
end
if prior > 0 then redis.call('PERSIST', rk) end
run_to(ctx, rk, id, r, 'P')
if KEYS[2] then redis.call('SET', KEYS[2], id) end
if adm then admission_count(ctx, rk, adm) end
for a = last + 1, last + 2 * np, 2 do
  redis.call('SET', key(ctx.base, 'p', id, ARGV[a]), ARGV[a + 1])
end

for a = 10, first - 1 do
  local name = ARGV[a]
  local h = def_get(rk, name)
  local t = state_get(rk, name)
  make_due(ctx, rk, id, r, name, t, h)
end
flush()
wake(ctx)
if ctx.refused then return {ILLEGAL, ''} end
return {OK, int(ctx.now)}
