-- lib_names.lua: the creation indexes a run is filed in once, at its
-- creation, and never moved: the index of all runs ia, and the name
-- indexes of its workflow, service, service and tenant, and tenant.
--
-- ia is a zset scored by creation (ms), member the run id: the status
-- counts read it with ZCOUNT (pending = all less the status indexes). A
-- name index, from format version 8, is a stream instead: x<w|s|u|v>:<name>,
-- an entry per call that creates runs of that name, its id
-- "<creation ms>-<seq>" and its one field r holding the ids of the runs it
-- files, separated by spaces. A zset entry costs about 124 bytes in a large
-- zset (a skiplist node, a dict entry, the member); a stream entry of one
-- run about 27, and a run filed with 63 others about 11. A name index is
-- only ever read by walking it (a name filter is never counted by ZCOUNT),
-- which a stream does as well as a zset (query_walk, lib_query.lua).
-- Format version 7 writes the zsets i<w|s|u|v>:<name>, scored and keyed as
-- ia; a reader reads both forms of each name index, so a prefix written by
-- either keeps answering (queries read the two as two keys, merged).
--
-- A stream's ids only grow: a call files its runs at "<now>-*", the
-- call's now being their creation. Should the stream hold a later id (a
-- clock stepped back), the runs are filed at the stream's next id instead
-- ("*"), which places them, in that index alone, at most the step later
-- than their creation.

-- Only index_add and the table names (names.add, names.flush,
-- names.forget) are locals of the library: a library holds at most 200.
local index_add, names = nil, {}
do
  -- index_add adds run id to the creation index zset k at score created:
  -- at once, or, in a call that creates many runs (ctx.zadds, set by
  -- run_create_many.lua), buffered for one ZADD per index for the whole
  -- call (index_flush, lib_create.lua).
  index_add = function(ctx, k, created, id)
    local zb = ctx.zadds
    if not zb then
      redis.call('ZADD', k, created, id)
      return
    end
    -- zb is both the map of lists and their order (buffer, lib_buffers.lua)
    buffer(zb, zb, k, created)
    buffer(zb, zb, k, id)
  end

  -- stream_add files the runs ids (one id, or ids separated by spaces)
  -- created at created (ms) in name stream k.
  local function stream_add(k, created, ids)
    local r = redis.pcall('XADD', k, created .. '-*', 'r', ids)
    if type(r) == 'table' and r.err then
      -- a later id is in the stream already (see above); an error of any
      -- other kind (out of memory) is raised by this second call
      redis.call('XADD', k, '*', 'r', ids)
    end
  end

  -- names.add files run id, created at created, in the name index of kind
  -- ('w', 's', 'u' or 'v') and name (for 'u', "<service>:<tenant>"): in the
  -- zset i<kind>:<name> when the call writes format 7, else in the stream
  -- x<kind>:<name>, at once or, in a call that creates many runs, buffered
  -- in ctx.xadds for one entry per index for the call (index_flush).
  names.add = function(ctx, kind, name, created, id)
    if not ctx.short then
      index_add(ctx, ctx.base .. 'i' .. kind .. ':' .. name, created, id)
      return
    end
    local k = ctx.base .. 'x' .. kind .. ':' .. name
    if not ctx.zadds then
      stream_add(k, created, id)
      return
    end
    local xb = ctx.xadds
    if not xb then
      xb = {}
      ctx.xadds = xb
    end
    local l = xb[k]
    if not l then
      l = {created = created}
      xb[k] = l
      xb[#xb + 1] = k
    end
    l[#l + 1] = id
  end

  -- names.flush writes the name stream entries names.add buffered in
  -- ctx.xadds: one entry per index for the call, its runs in the order they
  -- were written (a call's runs share its now, their creation).
  names.flush = function(ctx)
    local xb = ctx.xadds
    if not xb then return end
    for _, k in ipairs(xb) do
      local l = xb[k]
      stream_add(k, l.created, table.concat(l, ' '))
    end
    ctx.xadds = nil
  end

  -- stream_forget takes run id, created at created (ms, a string), out of
  -- name stream k: its entry goes when it files this run alone, or when
  -- none of the other runs it files is left (their hashes gone: deleted,
  -- pruned or expired); else it stays, and readers skip the runs it names
  -- that are gone. A stream left empty is deleted, so that names used once
  -- leave no key behind. The entries of one millisecond are read to find
  -- the run's: as many as its shard created in that millisecond.
  local function stream_forget(base, k, created, id)
    local es = redis.call('XRANGE', k, created, created)
    for _, e in ipairs(es) do
      local v = e[2][2]
      local hit = v == id
      if not hit and string.find(' ' .. v .. ' ', ' ' .. id .. ' ', 1, true) then
        hit = true
        for other in string.gmatch(v, '[^ ]+') do
          if other ~= id and redis.call('EXISTS', base .. 'r:' .. other) == 1 then return end
        end
      end
      if hit then
        redis.call('XDEL', k, e[1])
        if redis.call('XLEN', k) == 0 then redis.call('DEL', k) end
        return
      end
    end
  end

  -- names.forget takes run id out of the name indexes of its names wf, svc
  -- and tenant ('' for none): the zsets of format 7 (ZREM), and, when its
  -- creation is known (created, a string of ms, or nil), the streams of
  -- format 8 (stream_forget). The run's hash is gone already.
  names.forget = function(base, id, created, wf, svc, tenant)
    local function forget(kind, name)
      redis.call('ZREM', base .. 'i' .. kind .. ':' .. name, id)
      if created then stream_forget(base, base .. 'x' .. kind .. ':' .. name, created, id) end
    end
    if wf ~= '' then forget('w', wf) end
    if svc ~= '' then
      forget('s', svc)
      if tenant ~= '' then forget('u', svc .. ':' .. tenant) end
    end
    if tenant ~= '' then forget('v', tenant) end
  end
end
