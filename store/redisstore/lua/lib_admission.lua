-- lib_admission.lua: the caps on pending tasks per queue and per tenant
-- (plait.AdmissionStore), checked by the create of a run in its own call
-- and kept by task_to. The state, in keys built from the shard base:
--   ac   hash of the caps of the shard, "q:<queue>" or "t:<tenant>" ->
--        most pending tasks (admission_set.lua writes it on every shard)
--   an   hash of the pending tasks counted against a cap, same fields
--   and in the run hash, field ad, written only for a run counted against
--   a cap: "<tenant>;<queue>;<queue>;...;", the tenant empty when the run
--   is not counted against its tenant, then the queues it is counted in.
-- A create learns whether ac exists from the EXISTS of its run hashes it
-- makes anyway (ac is one more key of it): without caps in the shard, that
-- is all it does, and its run gets no field ad (admission_check). Otherwise it checks
-- each of the run's scopes that has a cap (its tenant, its tasks' queues,
-- read from its create arguments: admission_scopes) before any write,
-- answers the first one the run would take over its cap, or counts the
-- run's tasks in
-- each capped scope (HINCRBY of an) and writes field ad, after the run's
-- first write. A step that ends tasks looks whether the shard counts any
-- (EXISTS of an, once per call, from task_to): without, that is all it
-- does; with, task_to reads field ad (through the cache) of each run whose
-- task ends, and of one whose task a replay brings back, and moves the
-- counts it names.

-- admission_scopes lists the scopes of a new run, from its create
-- arguments A[o..] (run_create.lua's ARGV[3..]): its tenant (from field q)
-- with all its tasks, then its tasks' plain queues (from the d: headers,
-- a routed queue "render+gpu" counting on "render") in the order of their
-- first task, each with its tasks there. A run sent in parts (prior > 0)
-- has its d: fields in its hash rk already: they are read from there.
-- Returns the fields ("t:<tenant>", "q:<queue>") and the counts.
local function admission_scopes(A, o, rk, prior)
  local nf, nroots = tonumber(A[o + 4]), tonumber(A[o + 5])
  local first = o + 7 + nroots
  local fs, ns, at, total, tenant = {false}, {0}, {}, 0, ''
  local function add(d)
    local q = d and string.match(d, '^[^,+\n]+')
    if not q then return end
    local f = 'q:' .. q
    local i = at[f]
    if not i then
      i = #fs + 1
      at[f], fs[i], ns[i] = i, f, 0
    end
    ns[i] = ns[i] + 1
    total = total + 1
  end
  local order = ''
  for a = first, first + 2 * nf - 1, 2 do
    local f = A[a]
    if f == 'q' then
      tenant = string.match(A[a + 1], '^[^:]*:[^:]*:([^:]*):') or ''
    elseif f == 'o' then
      order = A[a + 1]
    elseif string.byte(f, 1) == 100 and string.byte(f, 2) == 58 then
      add(A[a + 1])
    end
  end
  if prior > 0 then
    -- the task names, in order, are field o, sent with the commit
    local names = {}
    for name in string.gmatch(order, '[^ ]+') do names[#names + 1] = 'd:' .. name end
    for i = 1, #names, 1000 do
      for _, d in ipairs(redis.call('HMGET', rk, unpack(names, i, math.min(i + 999, #names)))) do add(d) end
    end
  end
  if tenant == '' then
    table.remove(fs, 1)
    table.remove(ns, 1)
  else
    fs[1], ns[1] = 't:' .. tenant, total
  end
  return fs, ns, tenant
end

-- admission_check checks a new run, of create arguments A[o..] (see
-- admission_scopes), against the caps of its shard. The caller calls it
-- only when the shard has caps, which it learns from the EXISTS of its
-- run hashes that it makes anyway, ac one more key of it: a create in a
-- shard without caps makes no other call here. It returns
-- nil when no scope of the run has a cap; false and
-- "<field>:<cap>:<pending>:<tasks>" for the first scope (the tenant, then
-- the queues in the order of their first task) the run would take over
-- its cap; else the counting to make (admission_count): {mark, fields,
-- counts}. It writes nothing.
local function admission_check(ctx, A, o, rk, prior)
  -- the counts read in this call, with the runs it admitted
  local counts = ctx.adm
  if not counts then
    counts = {}
    ctx.adm = counts
  end
  local fs, ns, tenant = admission_scopes(A, o, rk, prior)
  if #fs == 0 then return nil end
  local base = ctx.base
  local caps = redis.call('HMGET', base .. 'ac', unpack(fs))
  local capped, need = {}, {}
  for i = 1, #fs do
    if caps[i] then
      capped[#capped + 1] = i
      if counts[fs[i]] == nil then need[#need + 1] = fs[i] end
    end
  end
  if #capped == 0 then return nil end
  if #need > 0 then
    local vs = redis.call('HMGET', base .. 'an', unpack(need))
    for j, f in ipairs(need) do counts[f] = tonumber(vs[j] or '0') or 0 end
  end
  local mark, cf, cn = {''}, {}, {}
  for _, i in ipairs(capped) do
    local f, n = fs[i], ns[i]
    if counts[f] + n > tonumber(caps[i]) then
      return false, f .. ':' .. caps[i] .. ':' .. int(counts[f]) .. ':' .. int(n)
    end
    if string.byte(f, 1) == 116 then mark[1] = tenant else mark[#mark + 1] = string.sub(f, 3) end
    cf[#cf + 1], cn[#cn + 1] = f, n
  end
  return {table.concat(mark, ';') .. ';', cf, cn}
end

-- admission_count counts the run of hash rk, written by this call, as
-- admission_check found it should: field ad, and its tasks in each capped
-- scope's count (kept in ctx.adm for the next run of the call).
local function admission_count(ctx, rk, adm)
  redis.call('HSET', rk, 'ad', adm[1])
  local ak = ctx.base .. 'an'
  for i, f in ipairs(adm[2]) do
    ctx.adm[f] = redis.call('HINCRBY', ak, f, adm[3][i])
  end
end

-- admission_add moves count f of hash ak by n through the cache: the call's
-- flush writes it, after its other hash writes were decided. A count back
-- at zero is deleted at once (HDEL needs no memory), so that a shard whose
-- counted runs all ended holds no an, and its steps skip the counting. A
-- count never goes below zero. Out of memory on the EVALSHA path (no
-- functions), that HDEL may be the one write of a step Redis then refuses
-- at its first write needing memory: the count is then one below the
-- tasks counted, letting one more in, never more.
local function admission_add(ak, f, n)
  local v = (tonumber(hget(ak, f) or '0') or 0) + n
  if v > 0 then hset(ak, f, itoa(v)) else hdel(ak, f) end
end

-- admission_end moves the counts task name of run hash rk is counted in by n:
-- -1 as it ends, +1 as a replay brings it back (task_to only).
local function admission_end(ctx, rk, name, n)
  local a = hget(rk, 'ad')
  if not a then return end
  -- counts may be buffered now that the EXISTS of an would miss
  ctx.adm_on = true
  local ak = ctx.base .. 'an'
  local semi = string.find(a, ';', 1, true)
  if not semi then return end
  if semi > 1 then admission_add(ak, 't:' .. string.sub(a, 1, semi - 1), n) end
  if semi < #a then
    local d = hget(rk, 'd:' .. name)
    local q = d and string.match(d, '^[^,+\n]+')
    if q and string.find(a, ';' .. q .. ';', semi, true) then admission_add(ak, 'q:' .. q, n) end
  end
end
