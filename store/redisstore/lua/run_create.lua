-- run_create.lua: store a new run (or commit one whose fields earlier
-- run_create_part.lua calls wrote) and make its root tasks ready or delayed.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash (no field m yet)
-- KEYS[2]  <prefix>:{s}:k:<key>   idempotency key index (only for keyed runs)
-- ARGV[1]  "<now>;<event cap>;<stats window>": now in ms since the Unix epoch or
--          "" to use Redis TIME, the stream cap in entries, 0 when stats are off
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
-- of the first try and changes nothing (its index entries are there
-- already; a ZADD of them again would change nothing either); a keyed
-- retry finds its own id in the key index and answers the same. A run
-- under this id can only be this call's: the id carries the nonce of its
-- store value's block and is handed out once (ids.go), so even after Redis
-- lost data no other create holds it, and no earlier run can have had it.
-- Lost data: ids stay unique across the loss (above). A retry that reaches
-- a Redis that lost the first try's run writes the run again under the
-- same id, still this call's. A keyed create whose key index was lost
-- creates a new run under the key. A run sent in parts whose parts were
-- lost before the commit answers CORRUPT and deletes what is left: the
-- create fails and no run is written.
-- Out of memory: the function is declared without allow-oom, so Redis
-- refuses the call up front and nothing is written. On the EVALSHA path
-- (and for the commit of a run sent in parts) the first write is the HSET
-- of the run's fields, which Redis refuses: nothing is written (parts of a
-- large run stay until their time to live ends). Deleting the parts of a
-- taken key or of a broken commit frees memory and is allowed.
-- Cut off: the call is atomic: a caller cut off mid-call created the run
-- whole or not at all. A resend of the same call (same id) answers the one
-- run (Retried); a new RunCreate takes a new id, so only a keyed create
-- keeps a caller that tries again to one run.

local rk = KEYS[1]
local id = ARGV[3]
local prior = tonumber(ARGV[6])

-- The common case, an unkeyed run sent whole that does not exist yet, is
-- written straight from ARGV: the moves of the run and of its root tasks are
-- made packed, into the field list, before its one HSET (the first write),
-- so no field is written twice or read back.
if prior == 0 and not KEYS[2] and redis.call('HEXISTS', rk, 'm') == 0 then
  local ctx = new_ctx(ARGV[2], ARGV[1])
  ctx.index_later = true
  local base, now = ctx.base, ctx.now
  local nroots = tonumber(ARGV[8])
  local nf = tonumber(ARGV[7])
  local np = tonumber(ARGV[9])
  local first = 10 + nroots
  local last = first + 2 * nf - 1
  local rootd, roots = {}, {}
  for a = 10, first - 1 do
    local root = {name = ARGV[a]}
    roots[#roots + 1] = root
    rootd['d:' .. root.name] = root
    rootd['s:' .. root.name] = root
  end
  -- the run's record in the scanned form (see meta_scan), digit strings
  -- where they are at hand: they go into the packed meta as they are.
  local r = scan_r
  r.st, r.gen, r.total, r.succ, r.mid, r.created, r.started, r.ended, r.strat = '', '', ARGV[5], '0', '0,0,0',
    ctx.nows, nil, nil, ARGV[4]
  local m = run_to(ctx, rk, id, r, 'P', true)
  if not m then return {ILLEGAL, ''} end
  local args = {'m', m}
  for a = first, last, 2 do
    local f = ARGV[a]
    local i = #args
    args[i + 1] = f
    args[i + 2] = ARGV[a + 1]
    if f == 'q' then ctx.q = ARGV[a + 1] end
    local root = rootd[f]
    if root then
      if string.byte(f, 1) == 100 then root.d = i + 2 else root.s = i + 2 end
    end
  end
  local lists, order = {}, {}
  for _, root in ipairs(roots) do
    local queue, prio, runat, delay = string.match(args[root.d], '^([^,\n]+),(%d),(%-?%d+),(%-?%d+),%d,%d+,[01]\n')
    local due = now
    runat, delay = tonumber(runat), tonumber(delay)
    if runat > 0 and runat > due then due = runat end
    if delay > 0 and now + delay > due then due = now + delay end
    local t = state_scan(args[root.s], scan_t)
    if not t then return {CORRUPT, ''} end
    local e = entry(id, root.name)
    local to = 'R'
    if due > now then to = 'W' end
    local s = task_to(ctx, rk, id, r, root.name, t, to, {queue = queue}, true)
    if not s then return {ILLEGAL, ''} end
    args[root.s] = s
    -- its queued time (set_queued): now, the run's creation, or its due
    local n = #args
    args[n + 1] = 'w:' .. root.name
    args[n + 2] = to == 'R' and '0' or int(due - now)
    if to == 'R' then
      buffer(lists, order, base .. 'q:' .. queue .. ':' .. prio, e)
    else
      root.zk, root.due, root.e = base .. 'z:' .. queue, due, e
    end
    owe(ctx, queue, 1)
  end
  -- first write: the fields, in chunks that stay under Lua's unpack limit.
  for i = 1, #args, 1000 do
    redis.call('HSET', rk, unpack(args, i, math.min(i + 999, #args)))
  end
  local moved = ctx.index_later
  ctx.index_later = nil
  run_index(ctx, rk, id, r, moved[1], moved[2])
  for a = last + 1, last + 2 * np, 2 do
    redis.call('SET', base .. 'p:' .. id .. ':' .. ARGV[a], ARGV[a + 1])
  end
  for _, root in ipairs(roots) do
    if root.zk and redis.call('ZADD', root.zk, root.due, root.e) == 1 and redis.call('ZCARD', root.zk) == 1 then
      register_queue(base, string.sub(root.zk, #base + 3))
    end
  end
  for _, lk in ipairs(order) do
    local es = lists[lk]
    for i = 1, #es, 1000 do
      local j = math.min(i + 999, #es)
      -- a reply equal to the entries pushed: the list was empty
      -- lk is <base>q:<queue>:<p>, p one digit
      if redis.call('RPUSH', lk, unpack(es, i, j)) == j - i + 1 then register_queue(base, string.sub(lk, #base + 3, -3)) end
    end
  end
  flush_events()
  wake(ctx)
  return {OK, now}
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
