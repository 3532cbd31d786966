-- lib_buffers.lua: the per-call cache of hash fields and the write buffers.
--
-- Hash reads and writes of one call go through a cache: a field is read
-- from Redis at most once (hmget fetches several in one call), and writes
-- are buffered and sent by flush() as one HSET per hash; ready entries are
-- buffered too and sent as one RPUSH per list, then deleted keys. Every
-- script calls flush() before it returns (and claim_tasks before it pops).
-- The order flush() writes in is what the scripts' "Out of memory" notes
-- rely on: lease removals first, then hashes, lists, deletions, and last
-- the events and counters (flush_events).

local hcache = {}
local hdirty = {}
local pushes = {}
local push_order = {}
-- push_base is the shard base of the ready lists buffered in pushes (one
-- shard per call): a list found empty by its RPUSH names its queue between
-- that base and the priority (register_queue).
local push_base = nil
local fronts = {}
local front_order = {}
local dels = {}
local unleased = {}
local unleased_key = nil
local kept = {}
-- held keeps, between claim_tasks's first flush and held_flush, the ready
-- entries that flush would have pushed (RPUSH) to the tail of each list,
-- per list key, in push order (held_order, held_n lists); held_at is the
-- next entry to hand out, held_was whether the list was empty ('e') or
-- not ('f') when first popped (unset: not popped). The claim pops each
-- list as the list it would have been, its Redis entries then these
-- (held_fill, lib_handoff.lua), so a task a finish made ready and the
-- same call claims goes to running without the RPUSH and LPOP of its
-- entry (the hand-off), in the order, and with the writes, the list
-- gives. held_none stands for no entries and is never written to.
local held_none = {}
local held, held_at, held_was, held_order = held_none, {}, {}, held_none
local held_n = 0
local wrote = false
-- events and counters buffered by task_to and run_to (lib_status.lua),
-- written by flush_events.
local evs = {}
local ev_n = 0
-- the events buffered (ev_n counts strings, two per pair; a pair may hold
-- several events of one run, note in lib_status.lua)
local ev_k = 0
-- the run whose pair, the last buffered, the next event of the same run
-- joins (nil: none may; note in lib_status.lua)
local ev_join = nil
local ev_errs = {}
local ev_base, ev_cap, ev_win, ev_now = nil, nil, 0, nil
local st_incr = {}
local st_durs = {}
local st_min = {}
-- the runs this call ended, "e" then an id and a status letter per run
-- (run_ended, lib_run.lua), up to ended_n, sent by flush_events
local ended, ended_n = {'e'}, 1

-- reset empties the buffers above; a function library keeps its locals
-- between calls, so every function call starts with it, which also drops
-- what a call that failed midway left buffered. A buffer left empty is
-- kept (flush and flush_events leave theirs so): a table made per call
-- costs its allocation and the collector's work to free it, and an empty
-- table holds no slot a later call could find an entry of this one in.
local function reset()
  if next(hcache) ~= nil then hcache = {} end
  if next(hdirty) ~= nil then hdirty = {} end
  if next(pushes) ~= nil then pushes, push_order = {}, {} end
  if next(fronts) ~= nil then fronts, front_order = {}, {} end
  if next(dels) ~= nil then dels = {} end
  if next(unleased) ~= nil then unleased = {} end
  unleased_key = nil
  if next(kept) ~= nil then kept = {} end
  if held_n > 0 then held, held_at, held_was, held_order, held_n = held_none, {}, {}, held_none, 0 end
  wrote = false
  if ev_n > 0 then evs, ev_n, ev_k = {}, 0, 0 end
  ev_join = nil
  if next(ev_errs) ~= nil then ev_errs = {} end
  ev_base = nil
  if next(st_incr) ~= nil then st_incr = {} end
  if next(st_durs) ~= nil then st_durs = {} end
  if next(st_min) ~= nil then st_min = {} end
  ended_n = 1
end

local function hfields(rk)
  local c = hcache[rk]
  if not c then
    c = {}
    hcache[rk] = c
  end
  return c
end

local function hget(rk, f)
  local c = hfields(rk)
  local v = c[f]
  if v == nil then
    v = redis.call('HGET', rk, f) or false
    c[f] = v
  end
  return v or nil
end

-- hmget loads the fields in fs that are not cached yet, in one HMGET.
-- The fields to read go into want, kept across calls and counted in nw:
-- what follows nw is left from an earlier read and never sent. want is
-- local to a block, as the state kept by new_ctx, wake and handler_set
-- (lib_claim.lua) is: the function library is one Lua chunk, which holds
-- at most 200 locals.
local hmget
do
  local want = {}

  hmget = function(rk, fs)
    local c = hfields(rk)
    local nw = 0
    for _, f in ipairs(fs) do
      if c[f] == nil then
        nw = nw + 1
        want[nw] = f
      end
    end
    for i = 1, nw, 1000 do
      local j = math.min(i + 999, nw)
      local vs = redis.call('HMGET', rk, unpack(want, i, j))
      for k = i, j do c[want[k]] = vs[k - i + 1] or false end
    end
    if nw > 1000 then want = {} end
  end
end

local function hset(rk, f, v)
  hfields(rk)[f] = v
  local d = hdirty[rk]
  if not d then
    d = {}
    hdirty[rk] = d
  end
  d[f] = true
end

local function hdel(rk, f)
  hfields(rk)[f] = false
  local d = hdirty[rk]
  if d then d[f] = nil end
  redis.call('HDEL', rk, f)
end

-- register_queue adds queue to the shard's queue registry qn (base the
-- shard base): called only when a push made one of the queue's lists or
-- its delayed zset go from empty to non-empty, so a push to a queue that
-- already holds tasks costs a comparison of the push's reply and nothing
-- more. The registry only grows (a queue that had tasks stays listed), so
-- QueueList shows a queue nobody serves, a typo'd one say, with its tasks.
local function register_queue(base, queue)
  redis.call('SADD', base .. 'qn', queue)
end

-- buffer appends e to the entries buffered for list lk, remembering the
-- order in which lists were first touched.
local function buffer(lists, order, lk, e)
  local es = lists[lk]
  if not es then
    es = {}
    lists[lk] = es
    order[#order + 1] = lk
  end
  es[#es + 1] = e
end

local function rpush(lk, e) buffer(pushes, push_order, lk, e) end

-- lpush puts e back at the head of list lk at the next flush; entries
-- returned to one list keep the order they were returned in.
local function lpush(lk, e) buffer(fronts, front_order, lk, e) end

-- unlease removes a lease entry at the next flush, before the buffered
-- writes: a finish's first write stays the removal of its lease, which
-- Redis allows when out of memory.
local function unlease(active, e)
  unleased_key = active
  unleased[#unleased + 1] = e
end

-- unlease_now is unlease for a step that writes at once instead of through
-- the buffers: the first such step of a call removes the lease entries
-- buffered so far and its own right away, so the call's first write is still
-- the removal of a lease; later ones are buffered as usual.
local function unlease_now(active, e)
  if wrote then
    unlease(active, e)
    return
  end
  unleased_key = active
  unleased[#unleased + 1] = e
  for i = 1, #unleased, 1000 do
    redis.call('ZREM', active, unpack(unleased, i, math.min(i + 999, #unleased)))
  end
  unleased = {}
  wrote = true
end

-- del deletes a key at the next flush, after the buffered writes.
local function del(k)
  dels[#dels + 1] = k
end

-- flush_series adds the per-minute counts buffered by task_to and run_to
-- (series in lib_status.lua) to the call's minute, on the call's clock:
-- one HINCRBY per counter into the hash of its hour,
-- <base>sm:<hour>:<counter>, field the minute of the hour (0-59), hours
-- and minutes counted from the Unix epoch. A counter's hash holds at most
-- 60 small fields, a listpack. The counter that made its minute's field
-- (its reply is the increment) sets the hash's TTL to 25 hours, so every
-- minute is kept at least a day after its end and an hour's hash goes 25
-- hours after its last minute: nothing needs pruning. Faults: a resent
-- call that changed no status counts nothing (the step moves nothing
-- twice); after data loss the lost minutes read as zeros; a full Redis
-- meets these writes last, after the step's own (flush_events); a cut-off
-- worker's step counted whatever it moved.
local function flush_series(base)
  if next(st_min) == nil then return end
  local minute = math.floor(tonumber(ev_now) / 60000)
  local pre = base .. 'sm:' .. int(math.floor(minute / 60)) .. ':'
  local f = itoa(minute % 60)
  for c, n in pairs(st_min) do
    local k = pre .. c
    if redis.call('HINCRBY', k, f, itoa(n)) == n then redis.call('PEXPIRE', k, '90000000') end
  end
  st_min = {}
end

-- flush_events writes the events, counters and durations buffered since
-- the last flush, after everything else a step writes (so under maxmemory
-- none of them is a call's first write): one XADD to the shard's stream
-- per call (per 2000 pairs), its first pair "t" and the call's now in ms,
-- then one pair per run's events, the run id and the events (one, or in
-- format version 8 its adjacent events of the call joined: note,
-- lib_status.lua), with
-- Redis's own trimming (MAXLEN ~, so it stays bounded and an append frees
-- about what it takes). The cap counts events: an entry holds the events
-- of one call, from one to thousands, so the stream is trimmed to the cap
-- divided by the recent average of events per entry (per_entry, kept
-- across calls per stream; a script run as EVALSHA keeps nothing and
-- takes its own call's count). Pairs of a repeated field cost
-- Redis less per event than a string joined in Lua (table.concat) or a
-- field of its own per event. With stats on, one HINCRBY per counter
-- changed and an LPUSH and LTRIM per task name with durations; then one
-- PUBLISH to <prefix>:ev for live readers and RunWait callers, "e" then
-- " <run> <status letter>" per run the call ended (ended; hub.go routes
-- it). Nothing is written per run: a run's events are read from its
-- shard's stream (a run lives in one shard). The cap and the stats window come from the step argument
-- (new_ctx). An event's error is read last, from the fields the step
-- wrote. The channel's name is kept across calls with the shard base it
-- was made from, and made again only when a call's base differs.
local flush_events
do
  local chan_base, chan
  local per_entry, cap_n, cap_s = {}, {}, {}

  flush_events = function()
    if ev_base == nil then return end
    local base = ev_base
    ev_base = nil
    local win = ev_win
    for i, e in pairs(ev_errs) do
      local hc = hcache[e[1]]
      local err = hc and hc[e[2]]
      if err == nil then err = redis.call('HGET', e[1], e[2]) end
      if err then evs[i] = evs[i] .. '\n' .. err end
    end
    if next(ev_errs) ~= nil then ev_errs = {} end
    local sk = base .. 'e'
    local cap = ev_cap
    if ev_n > 0 then
      -- events in each entry of this call (2000 pairs to an entry)
      local n = ev_k / math.ceil(ev_n / 4000)
      local avg = per_entry[sk]
      if avg then avg = avg + (n - avg) / 16 else avg = n end
      per_entry[sk] = avg
      local entries = math.ceil(ev_cap / avg)
      if entries ~= cap_n[sk] then cap_n[sk], cap_s[sk] = entries, itoa(entries) end
      cap = cap_s[sk]
    end
    for i = 1, ev_n, 4000 do
      redis.call('XADD', sk, 'MAXLEN', '~', cap, '*', 't', ev_now, unpack(evs, i, math.min(i + 3999, ev_n)))
    end
    if base ~= chan_base then chan_base, chan = base, string.match(base, '^(.*):{') .. ':ev' end
    if ended_n > 1 then
      redis.call('PUBLISH', chan, table.concat(ended, ' ', 1, ended_n))
      ended_n = 1
    else
      redis.call('PUBLISH', chan, 'e')
    end
    if ev_n > 0 then evs, ev_n, ev_k = {}, 0, 0 end
    ev_join = nil
    if win == 0 then return end
    local sk = base .. 'st'
    for f, n in pairs(st_incr) do
      if n ~= 0 then redis.call('HINCRBY', sk, f, itoa(n)) end
    end
    if next(st_incr) ~= nil then st_incr = {} end
    for name, ds in pairs(st_durs) do
      local lk = base .. 'sd:' .. name
      if redis.call('LPUSH', lk, unpack(ds)) > win then redis.call('LTRIM', lk, '0', itoa(win - 1)) end
    end
    if next(st_durs) ~= nil then st_durs = {} end
    flush_series(base)
  end
end

-- keep_history asks the next flush to copy what the attempt records of a
-- run that has just ended need to be read (its fields m, i, o, every s:,
-- a: and pg:, and from format version 8 on every w: and e:, which a final
-- attempt folded into its state is read with) from its hash rk into hk, kept for ms: the records outlive the
-- run (WithHistoryRetention). The copy is made once the hashes are
-- written, so it holds this call's writes. A run that ends again after a
-- replay is copied again, over the first copy. Only a store keeping
-- history longer than its runs asks for it: it reads the whole run hash.
-- Faults: a resent call that ends nothing copies nothing; after data loss
-- a copy goes with its run's hash or outlives it, as it would have; a full
-- Redis refuses its HSET as it does the step's other writes (the function
-- is refused whole); a cut-off worker's call copied or did not.
local function keep_history(rk, hk, ms)
  kept[#kept + 1] = {rk, hk, ms}
end

local function copy_kept()
  for _, k in ipairs(kept) do
    local all = redis.call('HGETALL', k[1])
    -- w: and e: from format version 8 on (the first byte of i; folded)
    local fold = (string.byte(redis.call('HGET', k[1], 'i') or '', 1) or 0) >= 8
    local out = {}
    for i = 1, #all, 2 do
      local f = all[i]
      if f == 'm' or f == 'i' or f == 'o' or string.find(f, '^[as]:') or string.find(f, '^pg:') or
        (fold and string.find(f, '^[ew]:')) then
        out[#out + 1] = f
        out[#out + 1] = all[i + 1]
      end
    end
    for i = 1, #out, 1000 do
      redis.call('HSET', k[2], unpack(out, i, math.min(i + 999, #out)))
    end
    if #out > 0 then redis.call('PEXPIRE', k[2], k[3]) end
  end
  kept = {}
end

-- flush writes what is buffered. A step that writes more after it
-- (claim_tasks before it pops) passes later_events: the events and
-- counters stay buffered for the step's last flush, so a call writes one
-- stream entry and one PUBLISH however many steps it makes. With hold,
-- the ready entries are kept back (held) for the pops that follow.
local function flush(later_events, hold)
  local nu = #unleased
  if nu > 0 then
    for i = 1, nu, 1000 do
      redis.call('ZREM', unleased_key, unpack(unleased, i, math.min(i + 999, nu)))
    end
    unleased = {}
  end
  if next(hdirty) ~= nil then
    -- one argument list for every HSET, its entries counted in na: what
    -- follows na is left from an earlier HSET and never sent
    local args = {}
    for rk, d in pairs(hdirty) do
      local c = hcache[rk]
      local na = 0
      for f in pairs(d) do
        args[na + 1] = f
        args[na + 2] = c[f]
        na = na + 2
        if na >= 1000 then
          redis.call('HSET', rk, unpack(args, 1, na))
          na = 0
        end
      end
      if na > 0 then redis.call('HSET', rk, unpack(args, 1, na)) end
    end
    hdirty = {}
  end
  if #kept > 0 then copy_kept() end
  local np = #push_order
  if np > 0 and hold then
    held, held_order, held_n = pushes, push_order, np
    pushes, push_order = {}, {}
  elseif np > 0 then
    for x = 1, np do
      local lk = push_order[x]
      local es = pushes[lk]
      for i = 1, #es, 1000 do
        local j = math.min(i + 999, #es)
        -- a reply equal to the entries pushed: the list was empty
        if redis.call('RPUSH', lk, unpack(es, i, j)) == j - i + 1 then
          -- lk is <base>q:<queue>:<p>, p one digit
          register_queue(push_base, string.sub(lk, #push_base + 3, -3))
        end
      end
    end
    pushes, push_order = {}, {}
  end
  local nf = #front_order
  if nf > 0 then
    for x = 1, nf do
      local lk = front_order[x]
      local es = fronts[lk]
      for i = #es, 1, -1 do redis.call('LPUSH', lk, es[i]) end
    end
    fronts, front_order = {}, {}
  end
  local nd = #dels
  if nd > 0 then
    for i = 1, nd, 1000 do
      redis.call('DEL', unpack(dels, i, math.min(i + 999, nd)))
    end
    dels = {}
  end
  if not later_events then flush_events() end
end

local function owe(ctx, queue, n)
  ctx.wake[queue] = (ctx.wake[queue] or 0) + n
end

local function push_ready(ctx, id, name, h)
  local e = entry(id, name)
  rpush(key(ctx.base, 'q', h.queue, h.prio), e)
  push_base = ctx.base
  owe(ctx, h.queue, 1)
  ctx.readied[e] = h.queue
end

-- push_front is push_ready to the head of the list: a claim given back
-- unstarted goes back to where it was claimed from.
local function push_front(ctx, id, name, h)
  local e = entry(id, name)
  lpush(key(ctx.base, 'q', h.queue, h.prio), e)
  owe(ctx, h.queue, 1)
  ctx.readied[e] = h.queue
end

local function push_delayed(ctx, id, name, h, due)
  local zk = key(ctx.base, 'z', h.queue)
  -- a ZADD answers whether the member is new, not whether the key is: a
  -- ZCARD of 1 after it is a zset that was empty
  if redis.call('ZADD', zk, int(due), entry(id, name)) == 1 and redis.call('ZCARD', zk) == 1 then
    register_queue(ctx.base, h.queue)
  end
  owe(ctx, h.queue, 1)
end

-- wake leaves, per queue, min(LLEN + owed, 64) tokens in the queue's wake
-- list n:<queue>: it pushes only what the list lacks (the tokens are all
-- alike, the first n of tokens, made by the first push), so a full list,
-- the usual state while nobody waits, costs one LLEN.
local wake
do
  local tokens

  wake = function(ctx)
    for q, n in pairs(ctx.wake) do
      if n > 0 then
        local wk = key(ctx.base, 'n', q)
        local room = 64 - redis.call('LLEN', wk)
        if n > room then n = room end
        if n > 0 then
          if not tokens then
            tokens = {}
            for i = 1, 64 do tokens[i] = '1' end
          end
          redis.call('RPUSH', wk, unpack(tokens, 1, n))
        end
      end
    end
  end
end
