-- lib_query.lua: the checks of a run filter that an index does not hold,
-- made run by run as run_list.lua and run_count.lua read an index, and
-- where their read goes on from a cursor. It writes nothing.
--
-- A filter is read from the script's ARGV, from position i on, as seven
-- strings:
--   letters   status letters a run must be in ("" for any)
--   wf svc tenant  names its field q must hold ("" for any)
--   cfrom cto      creation bounds in ms, cfrom included, cto excluded
--                  ("" for none): checked on the end index, whose score
--                  is the end
--   errp      a prefix one of its tasks' errors (e:<task>) must start
--             with ("" for none)

-- query_filter reads the filter at argv[i..i+6] (the script's ARGV,
-- passed: a function library's helpers see no ARGV of their own).
local function query_filter(argv, i)
  local f = {letters = argv[i], wf = argv[i + 1], svc = argv[i + 2], tenant = argv[i + 3],
    cfrom = tonumber(argv[i + 4]), cto = tonumber(argv[i + 5]), errp = argv[i + 6]}
  f.names = f.wf ~= '' or f.svc ~= '' or f.tenant ~= ''
  f.fields = {'m'}
  if f.names then f.fields[#f.fields + 1] = 'q' end
  if f.errp ~= '' then f.fields[#f.fields + 1] = 'o' end
  return f
end

-- query_errors reports whether a task of run hash rk, whose task names
-- are o, has an error starting with p, and how many tasks it read. The
-- errors are read 500 fields per HMGET (a Lua call takes a bounded number
-- of arguments).
local function query_errors(rk, o, p)
  local fs, n = {}, 0
  for name in string.gmatch(o or '', '[^ ]+') do
    n = n + 1
    fs[#fs + 1] = 'e:' .. name
  end
  local np = #p
  for i = 1, #fs, 500 do
    local es = redis.call('HMGET', rk, unpack(fs, i, math.min(i + 499, #fs)))
    for j = 1, #es do
      local e = es[j]
      if e and string.sub(e, 1, np) == p then return true, n end
    end
  end
  return false, n
end

-- query_match reports whether run id of shard base passes filter f, with
-- its status letter (nil when it has no hash) and the entries its check
-- cost against the read budget: 1, plus its tasks when the errors were
-- read.
local function query_match(f, base, id)
  local rk = key(base, 'r', id)
  local v = redis.call('HMGET', rk, unpack(f.fields))
  local m = v[1]
  if not m then return false, nil, 1 end
  local st = string.sub(m, 1, 1)
  if f.letters ~= '' and not string.find(f.letters, st, 1, true) then return false, st, 1 end
  if f.names then
    local q = v[2]
    if not q then return false, st, 1 end
    local wf, svc, tenant = string.match(q, '^([^:]*):([^:]*):([^:]*):')
    if (f.wf ~= '' and wf ~= f.wf) or (f.svc ~= '' and svc ~= f.svc) or (f.tenant ~= '' and tenant ~= f.tenant) then
      return false, st, 1
    end
  end
  if f.cfrom or f.cto then
    -- either layout, and a run of any generation (lib_codec.lua)
    local r = meta_scan(m, scan_r)
    local created = r and tonumber(r.created)
    if not created or (f.cfrom and created < f.cfrom) or (f.cto and created >= f.cto) then return false, st, 1 end
  end
  if f.errp ~= '' then
    local ok, n = query_errors(rk, v[#v], f.errp)
    return ok, st, 1 + n
  end
  return true, st, 1
end

-- query_keys returns the keys a call reads, of the script's keys: all of
-- them, or, when pick is '1', the one of fewest entries (ZCARD), the
-- indexes being alternatives that hold every run the filter selects.
local function query_keys(keys, pick)
  if pick ~= '1' or #keys < 2 then return keys end
  local best, n = keys[1], redis.call('ZCARD', keys[1])
  for i = 2, #keys do
    local c = redis.call('ZCARD', keys[i])
    if c < n then best, n = keys[i], c end
  end
  return {best}
end

-- query_skip answers the offset in index k, read by ZREVRANGEBYSCORE from
-- max down, of the first entry after the cursor (max, cid): the entries
-- scored like the cursor sort by member, descending, and those at or
-- above cid were read already. A binary search of their offset, so going
-- on after many runs of one millisecond costs a few reads, not one per
-- entry skipped. max is the cursor's score as ZREVRANGEBYSCORE takes it.
local function query_skip(k, max, cid)
  local off, hi = 0, redis.call('ZCOUNT', k, max, max)
  while off < hi do
    local mid = math.floor((off + hi) / 2)
    local e = redis.call('ZREVRANGEBYSCORE', k, max, max, 'LIMIT', mid, 1)[1]
    if e and e >= cid then off = mid + 1 else hi = mid end
  end
  return off
end
