-- lib_create.lua: the create of one run sent whole, shared by
-- run_create.lua (one run) and run_create_many.lua (many runs of one
-- shard in one call).
--
-- create_found answers a run that needs no writing: {OK, createdMs} when
-- the run under this id exists already (a resend), {KEY_TAKEN, id} when
-- key index kk (nil for an unkeyed run) names a run, else nil. none says
-- the caller knows no run hash of its call exists (one EXISTS of them
-- all): the run's own look-up is skipped.
local function create_found(rk, kk, id, none)
  if kk then
    local old = redis.call('GET', kk)
    if old then
      if old == id then
        local r = meta_get(rk)
        if r then return OK, int(r.created) end
      end
      return KEY_TAKEN, old
    end
  end
  if not none and redis.call('HEXISTS', rk, 'm') == 1 then
    local r = meta_get(rk)
    if r then return OK, int(r.created) end
  end
  return nil
end

-- The tables create_run works in, kept between its runs and, in a
-- function library, between calls: a table made costs Redis about as much
-- as a command, and create_run would make several per run. c_roots holds
-- one record per root (its name, the places of its d: and s: fields in
-- c_args, its move, state, queue, priority, due time, delayed zset),
-- c_rootd the record of each root's field name for this run only (emptied
-- as the run ends), c_args the run's HSET arguments (create_run counts
-- its own: entries past them are an earlier run's, never sent), c_h the
-- definition header handed to task_to.
local c_roots, c_rootd, c_args, c_h = {}, {}, {}, {queue = false}

-- create_run writes a new run (hash rk, key index kk or nil) from A[o..]:
-- its id, strategy letter, number of tasks, 0, number of field pairs f,
-- of roots nr, of payloads np, then nr root names, f field/value pairs,
-- np task/payload pairs (run_create.lua's ARGV[3..]). The moves of the run
-- and of its root tasks are made packed, into the field list, before its
-- one HSET (the run's first write), so no field is written twice or read
-- back. Every check comes before any write and before any event or
-- counter is buffered: a refused run returns its code (CORRUPT, ILLEGAL)
-- and leaves nothing behind, so a batch goes on with its next run. The
-- ready entries go into lists/order (buffer), which the caller pushes
-- with push_created after its last run: a batch sends one RPUSH per list.
-- Returns nil when the run is written; the caller then owes
-- push_created, flush_events and wake.
local function create_run(ctx, rk, kk, A, o, lists, order)
  local code = nil
  local id = A[o]
  local base, now = ctx.base, ctx.now
  local nf = tonumber(A[o + 4])
  local nroots = tonumber(A[o + 5])
  local np = tonumber(A[o + 6])
  local first = o + 7 + nroots
  local last = first + 2 * nf - 1
  if not run_can('', 'P') then return ILLEGAL end
  local roots, rootd, args = c_roots, c_rootd, c_args
  for n = 1, nroots do
    local root = roots[n]
    if not root then
      root = {name = false, d = false, s = false, to = false, t = false, queue = false, prio = false, due = false,
        zk = false, tt = false}
      roots[n] = root
    end
    local name = A[o + 6 + n]
    root.name, root.d, root.s, root.zk = name, false, false, false
    rootd['d:' .. name] = root
    rootd['s:' .. name] = root
  end
  args[1], args[2] = 'm', false
  local i = 2
  ctx.q = nil
  for a = first, last, 2 do
    local f = A[a]
    args[i + 1] = f
    args[i + 2] = A[a + 1]
    if f == 'q' then ctx.q = A[a + 1] end
    local root = rootd[f]
    if root then
      if string.byte(f, 1) == 100 then root.d = i + 2 else root.s = i + 2 end
    end
    i = i + 2
  end
  -- the checks: every root's definition and state readable, its move
  -- allowed.
  for n = 1, nroots do
    local root = roots[n]
    rootd['d:' .. root.name], rootd['s:' .. root.name] = nil, nil
    local queue, prio, runat, delay
    if root.d then
      queue, prio, runat, delay = string.match(args[root.d], '^([^,\n]+),(%d),(%-?%d+),(%-?%d+),%d,%d+,[01]\n')
    end
    -- the first root scans into scan_t (lib_codec.lua), the others into
    -- tables of their own: each is moved after every root is checked
    local t = nil
    if queue and root.s then
      local into = scan_t
      if n > 1 then
        into = root.tt
        if not into then
          into = {st = false, gen = false, attempt = false, epoch = false, mid = false, first = false, claim = false,
            ended = false, worker = false}
          root.tt = into
        end
      end
      local sv = args[root.s]
      if sv == 'P,0,0,0,0,0,,,,' then
        -- the state every task is created in (newTaskState, codec_state.go):
        -- its scanned form is known, with no match
        into.st, into.gen, into.attempt, into.epoch, into.mid, into.first, into.claim, into.ended, into.worker =
          'P', nil, '0', '0', '0,0,0', '', '', '', ''
        t = into
      else
        t = state_scan(sv, into)
      end
    end
    if not t then
      code = code or CORRUPT
    else
      local due = now
      runat, delay = tonumber(runat), tonumber(delay)
      if runat > 0 and runat > due then due = runat end
      if delay > 0 and now + delay > due then due = now + delay end
      root.to = due > now and 'W' or 'R'
      if not task_can(t.st, root.to) then code = code or ILLEGAL end
      root.t, root.queue, root.prio, root.due = t, queue, prio, due
    end
  end
  if code then return code end
  -- the run's record in the scanned form (see meta_scan), digit strings
  -- where they are at hand: they go into the packed meta as they are.
  local r = scan_r
  r.st, r.gen, r.total, r.succ, r.mid, r.created, r.started, r.ended, r.strat = '', '', A[o + 2], '0', '0,0,0',
    ctx.nows, nil, nil, A[o + 1]
  ctx.index_later = true
  args[2] = run_to(ctx, rk, id, r, 'P', true)
  local h = c_h
  for n = 1, nroots do
    local root = roots[n]
    local to = root.to
    h.queue = root.queue
    args[root.s] = task_to(ctx, rk, id, r, root.name, root.t, to, h, true)
    -- its queued time (set_queued): now, the run's creation, or its due
    args[i + 1] = 'w:' .. root.name
    args[i + 2] = to == 'R' and '0' or int(root.due - now)
    i = i + 2
    if to == 'R' then
      buffer(lists, order, base .. 'q:' .. root.queue .. ':' .. root.prio, entry(id, root.name))
    else
      root.zk = base .. 'z:' .. root.queue
    end
    owe(ctx, root.queue, 1)
  end
  -- first write: the fields, in chunks that stay under Lua's unpack limit.
  for j = 1, i, 1000 do
    redis.call('HSET', rk, unpack(args, j, math.min(j + 999, i)))
  end
  -- A library's tables live on between calls: the list of a large run is
  -- let go of, so that no more than the values of a few small tasks stay
  -- held until the next create.
  if i > 64 then c_args = {} end
  local moved = ctx.index_later
  ctx.index_later = nil
  run_index(ctx, rk, id, r, moved[1], moved[2])
  if kk then redis.call('SET', kk, id) end
  for a = last + 1, last + 2 * np, 2 do
    redis.call('SET', base .. 'p:' .. id .. ':' .. A[a], A[a + 1])
  end
  for n = 1, nroots do
    local root = roots[n]
    if root.zk and redis.call('ZADD', root.zk, root.due, entry(id, root.name)) == 1 and redis.call('ZCARD', root.zk) == 1 then
      register_queue(base, root.queue)
    end
  end
  return nil
end

-- push_created pushes the ready entries create_run buffered, one RPUSH per
-- list (per 1000 entries), in the order the runs were written; a list
-- found empty by its push registers its queue.
local function push_created(base, lists, order)
  for _, lk in ipairs(order) do
    local es = lists[lk]
    for i = 1, #es, 1000 do
      local j = math.min(i + 999, #es)
      -- a reply equal to the entries pushed: the list was empty
      -- lk is <base>q:<queue>:<p>, p one digit
      if redis.call('RPUSH', lk, unpack(es, i, j)) == j - i + 1 then register_queue(base, string.sub(lk, #base + 3, -3)) end
    end
  end
end

-- index_flush writes the creation index entries index_add and names.add
-- buffered in ctx.zadds and ctx.xadds (lib_names.lua): one ZADD per index
-- (per 500 runs) and one stream entry per name index, in the order the
-- runs were written.
local function index_flush(ctx)
  names.flush(ctx)
  local zb = ctx.zadds
  for _, k in ipairs(zb) do
    local l = zb[k]
    for i = 1, #l, 1000 do
      redis.call('ZADD', k, unpack(l, i, math.min(i + 999, #l)))
    end
  end
  ctx.zadds = nil
end
