-- lib_admission.lua: the caps on pending tasks per queue and per tenant
-- (plait.AdmissionStore), checked by the create of a run in its own call
-- and kept by task_to. The state, in keys built from the shard base:
--   ac   hash of the caps of the shard, "q:<queue>" or "t:<tenant>" ->
--        most pending tasks (admission_set.lua writes it on every shard)
--   an   hash of the pending tasks counted against a cap, same fields
--   and in the run hash, field ad, written only for a run counted against
--   a cap: "<tenant>;<queue>;<queue>;...;", the tenant empty when the run
--   is not counted against its tenant, then the queues it is counted in.
-- A create reads ac once per call (EXISTS): without caps in the shard,
-- that is all it does, and its run gets no field ad. Otherwise it checks
-- each of the run's scopes that has a cap (its tenant, its tasks' queues,
-- named in the run's descriptor, its last argument: "<tenant> <queue>=<n>
-- <queue>=<n>...", tenant empty when none) before any write, answers the
-- first one the run would take over its cap, or counts the run's tasks in
-- each capped scope (HINCRBY of an) and writes field ad, after the run's
-- first write. task_to reads field ad (through the cache; the finish reads
-- it with the task's record) of a task that ends, and of one a replay
-- brings back: a run without it pays that look-up and nothing more.

-- admission_open makes ctx.adm, the counts read in this call, when the shard
-- has caps: one EXISTS, once per create call.
local function admission_open(ctx)
  if redis.call('EXISTS', ctx.base .. 'ac') == 1 then ctx.adm = {} end
end

-- admission_check checks a new run, of descriptor desc, against the caps
-- (admission_open first). It returns nil when no scope of the run has a cap;
-- false and "<field>:<cap>:<pending>:<tasks>" for the first scope (the
-- tenant, then the queues in the descriptor's order) the run would take
-- over its cap; else the counting to make (admission_count): {mark, fields,
-- counts}. It writes nothing.
local function admission_check(ctx, desc)
  local counts = ctx.adm
  if not counts or not desc then return nil end
  local tenant, rest = string.match(desc, '^([^ ]*)(.*)$')
  local fs, ns, total = {}, {}, 0
  if tenant ~= '' then fs[1], ns[1] = 't:' .. tenant, 0 end
  for q, n in string.gmatch(rest, ' ([^=]+)=(%d+)') do
    n = tonumber(n)
    total = total + n
    fs[#fs + 1], ns[#ns + 1] = 'q:' .. q, n
  end
  if tenant ~= '' then ns[1] = total end
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
-- flush writes it, after its other hash writes were decided.
local function admission_add(ak, f, n)
  hset(ak, f, itoa((tonumber(hget(ak, f) or '0') or 0) + n))
end

-- admission_end moves the counts task name of run hash rk is counted in by n:
-- -1 as it ends, +1 as a replay brings it back (task_to only).
local function admission_end(ctx, rk, name, n)
  local a = hget(rk, 'ad')
  if not a then return end
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
