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

-- query_keys returns the keys a call reads, of the script's keys, with
-- their forms (kinds, a letter per key: 'x' a name stream, else a zset)
-- and the position in keys of the first: all of them, or, when pick names
-- a count g of keys per alternative, the g keys of the alternative of
-- fewest entries (ZCARD, XLEN), the indexes being alternatives that hold
-- every run the filter selects.
local function query_keys(keys, pick, kinds)
  local g = tonumber(pick) or 0
  if g < 1 or #keys <= g then return keys, kinds, 1 end
  local best, fewest = 1, nil
  for a = 1, #keys, g do
    local n = 0
    for i = a, a + g - 1 do
      if string.sub(kinds, i, i) == 'x' then
        n = n + redis.call('XLEN', keys[i])
      else
        n = n + redis.call('ZCARD', keys[i])
      end
    end
    if not fewest or n < fewest then best, fewest = a, n end
  end
  local out = {}
  for i = best, best + g - 1 do out[#out + 1] = keys[i] end
  return out, string.sub(kinds, best, best + g - 1), best
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

-- query_walk visits the entries of index k newest first, from position
-- (max, cid) down to min: visit(run id, score) for each, in the order
-- ZREVRANGEBYSCORE gives a zset, by score (ms) then member, both
-- descending, whichever form k has: kind 'x', a name stream
-- (lib_names.lua), whose entries of one millisecond are read whole and
-- their runs sorted, so that a stream and a zset of the same runs are
-- walked alike and one cursor serves both; else a zset. A stream's visit
-- gets a third argument, true when the millisecond's entries file several
-- runs in one entry, which may name runs deleted since (a run filed alone
-- leaves its stream as it goes, like a zset member). max is as
-- ZREVRANGEBYSCORE takes it ("+inf", "(<ms>" or "<ms>"), cid the member
-- of the cursor ('' for none): the entries scored max whose member is at
-- or above it were on earlier pages and are skipped. chunk is the entries
-- one read takes. visit returns false to stop; query_walk returns true
-- when k holds no entry past the last one visited.
local query_walk
do
  local function walk_zset(k, max, cid, min, chunk, visit)
    local off = 0
    if cid ~= '' then off = query_skip(k, max, cid) end
    while true do
      local es = redis.call('ZREVRANGEBYSCORE', k, max, min, 'WITHSCORES', 'LIMIT', off, chunk)
      for j = 1, #es, 2 do
        off = off + 1
        if not visit(es[j], es[j + 1]) then
          if j + 1 < #es then return false end
          return #redis.call('ZREVRANGEBYSCORE', k, max, min, 'LIMIT', off, 1) == 0
        end
      end
      if #es < 2 * chunk then return true end
    end
  end

  local function desc(a, b) return a > b end

  -- the millisecond of stream id e ("<ms>-<seq>"), as a string
  local function ms_of(e) return string.sub(e, 1, string.find(e, '-', 1, true) - 1) end

  local function walk_stream(k, max, cid, min, chunk, visit)
    local hi, lo, cs = max, tonumber(min), nil
    if max == '+inf' then
      hi = '+'
    elseif string.sub(max, 1, 1) == '(' then
      hi = tostring(tonumber(string.sub(max, 2)) - 1)
    end
    if cid ~= '' then cs = max end
    while hi == '+' or tonumber(hi) >= lo do
      local es = redis.call('XREVRANGE', k, hi, min, 'COUNT', chunk)
      local ne = #es
      if ne == 0 then return true end
      local full = ne == chunk
      local mss = {}
      for p = 1, ne do mss[p] = ms_of(es[p][1]) end
      local i = 1
      while i <= ne do
        local ms = mss[i]
        local j = i
        while j < ne and mss[j + 1] == ms do j = j + 1 end
        local group, gi, gj = es, i, j
        if j == ne and full then
          -- the read may have stopped inside this millisecond: read it whole
          group = redis.call('XREVRANGE', k, ms, ms)
          gi, gj = 1, #group
        end
        local ids, shared = {}, false
        for g = gi, gj do
          local v = group[g][2][2]
          if string.find(v, ' ', 1, true) then
            shared = true
            for id in string.gmatch(v, '[^ ]+') do ids[#ids + 1] = id end
          else
            ids[#ids + 1] = v
          end
        end
        if #ids > 1 then table.sort(ids, desc) end
        for n = 1, #ids do
          local id = ids[n]
          if not (cs == ms and id >= cid) and not visit(id, ms, shared) then
            if n < #ids or j < ne then return false end
            return #redis.call('XREVRANGE', k, tostring(tonumber(ms) - 1), min, 'COUNT', 1) == 0
          end
        end
        i = j + 1
      end
      if not full then return true end
      hi = tostring(tonumber(mss[ne]) - 1)
    end
    return true
  end

  query_walk = function(k, kind, max, cid, min, chunk, visit)
    if kind == 'x' then return walk_stream(k, max, cid, min, chunk, visit) end
    return walk_zset(k, max, cid, min, chunk, visit)
  end
end
