-- run_replay.lua: open the next generation of a finished run (a replay):
-- the named tasks (or every failed, dead, cancelled and skipped one) and
-- every task below them go back to pending; those whose parents are done
-- are made due or skipped as a finish would.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua)
-- ARGV[2]  shard base "<prefix>:{s}:"
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  run id
-- ARGV[5]  the generation the caller replaces (the run's field g, absent = 0)
-- ARGV[6]  the task names asked for, separated by ' ', or '' for every
--          failed, dead, cancelled and skipped task
--
-- Transition: run S/F/C -> U (the table run_replay of the rendered status
-- machine, taken only because ctx.replay is set); each reset task
-- F/D/C/K/S -> P (the table task_replay), then P -> R or W
-- (make_due) or K (skipped again, release_children), and the run may end
-- again at once (finish_run) when nothing is left to run.
--
-- Returns {OK, n, the n reset names, then the run hash as HGETALL gives
-- it}; {REPLAY_EXISTING, then the run hash} when the run is at generation
-- ARGV[5]+1 already; {NOT_FOUND} no run, {NOT_FOUND, task} no such task;
-- {INVALID} nothing to replay; {CORRUPT} corrupt record; {REPLAY_CONFLICT,
-- generation, status} the run is active or at another generation;
-- {REPLAY_NOT_REPLAY, task, status, run status} a named task a replay does
-- not restart; {REPLAY_PAYLOAD_GONE, task} a reset task whose payload, kept
-- apart, is gone; {ILLEGAL} a refused move. Every refusal is decided before
-- the first write, so a refused replay writes nothing.
--
-- Queue registry: a push that makes a queue's ready list or delayed set
-- go from empty to non-empty adds the queue to the shard's registry qn
-- (SADD, register_queue in lib_buffers.lua; QueueList reads it). A resend
-- adds it again to no effect; Redis full refuses it with the script's
-- other writes, as below; a registry Redis lost is written again by the
-- next such push, and lists nothing meanwhile.
-- Folded attempts: a reset task whose final attempt was folded into its
-- state (format version 8, codec_fold.go) first gets that attempt written
-- out as its a:<task>:<epoch> record (unfold, lib_codec.lua), from the
-- state, w: and e: it is about to lose, in the same atomic call; the
-- paragraphs below hold for it as for the call's other writes.
-- Retried: the first call moved the run to generation ARGV[5]+1, so the
-- retry answers REPLAY_EXISTING and the run, changing nothing (no record
-- written twice): one generation per caller's intent. A second caller that read the same
-- generation gets the same answer; one that read an older one is refused.
-- Lost data: a lost run hash answers NOT_FOUND. A lost payload key of a
-- reset task (kept apart, expired or evicted) refuses the replay
-- (REPLAY_PAYLOAD_GONE) rather than reset a task no claim could run. Lost
-- index or dead-letter entries stay lost; the ZREM/LREM of a missing entry
-- removes nothing.
-- Out of memory: declared without allow-oom, like a create: a replay
-- brings work back, so a full Redis refuses it up front, whole, and the
-- call answers plait.ErrStoreFull. On the EVALSHA path its first write is
-- the HSET of field g, which Redis refuses alone.
-- Cut off: the script is atomic; a caller cut off mid-call retries and
-- gets OK or REPLAY_EXISTING.
-- Keys: the run's keys lose their TTL (PERSIST: the hash, its dead-letter
-- list x:, its log lines tl:, its idempotency key k:, every payload key
-- it keeps, of the reset tasks and of the tasks left failed, dead,
-- cancelled or skipped, which a later replay may reset) while it runs
-- again, so nothing of it expires however long the generation runs;
-- run_ended sets it again at the generation's end. Its expiry list entry stays behind; the pruner skips a
-- run that is active again or ended later (run_prune.lua). The dead
-- letters of the reset tasks leave x:<run> (LREM) and the index dl (ZREM).
-- A reset task's latest progress report pg:<task> moves to
-- pg:<task>:<epoch>, where its attempt record still finds it. A reset
-- task whose final attempt was folded into its state (format version 8,
-- lib_codec.lua) gets that attempt's record a:<task>:<epoch> written out
-- before its state is reset; a resend that finds the run replayed already
-- (REPLAY_EXISTING) writes nothing, and the record stays as written.
-- A cancelled task's stale queue entries (a cancel leaves them for the
-- next claim to drop) find the task ready again and may claim it; the
-- entry pushed here then finds it taken and is dropped, so it runs once.

local rk, id = KEYS[1], ARGV[4]
local expect = tonumber(ARGV[5]) or 0
local r = meta_get(rk)
if r == nil then return {NOT_FOUND} end
if r == false then return {CORRUPT} end
local gen = tonumber(hget(rk, 'g') or '0') or 0
if gen == expect + 1 then
  local out = {REPLAY_EXISTING}
  for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
  return out
end
if gen ~= expect or not run_terminal(r) then return {REPLAY_CONFLICT, gen, r.st} end

local names, pos = {}, {}
for name in string.gmatch(hget(rk, 'o') or '', '[^ ]+') do
  names[#names + 1] = name
  pos[name] = #names
end
local fs = {}
for _, name in ipairs(names) do
  fs[#fs + 1] = 's:' .. name
  fs[#fs + 1] = 'c:' .. name
end
hmget(rk, fs)
local states = {}
for i, name in ipairs(names) do
  local t = state_get(rk, name)
  if not t then return {CORRUPT} end
  states[i] = t
end
local replayable = {F = true, D = true, C = true, K = true}

-- the tasks asked for, by index
local asked = {}
if ARGV[6] == '' then
  for i, t in ipairs(states) do
    if replayable[t.st] then asked[#asked + 1] = i end
  end
  if #asked == 0 then return {INVALID} end
else
  for name in string.gmatch(ARGV[6], '[^ ]+') do
    local i = pos[name]
    if not i then return {NOT_FOUND, name} end
    if not replayable[states[i].st] then return {REPLAY_NOT_REPLAY, name, states[i].st, r.st} end
    asked[#asked + 1] = i
  end
end

-- and every task below them, in definition order
local seen, work = {}, {}
for _, i in ipairs(asked) do
  if not seen[i] then
    seen[i] = true
    work[#work + 1] = i
  end
end
while #work > 0 do
  local i = table.remove(work)
  for _, e in ipairs(edges(hget(rk, 'c:' .. names[i]) or '')) do
    local c = pos[e.name]
    if not c then return {CORRUPT} end
    if not seen[c] then
      seen[c] = true
      work[#work + 1] = c
    end
  end
end
local reset, heads = {}, {}
for i = 1, #names do
  if seen[i] then
    reset[#reset + 1] = i
    fs = {'d:' .. names[i], 'u:' .. names[i]}
    hmget(rk, fs)
    local h = def_get(rk, names[i])
    if not h then return {CORRUPT} end
    heads[i] = h
    if h.apart and redis.call('EXISTS', key(ARGV[2], 'p', id, names[i])) == 0 then return {REPLAY_PAYLOAD_GONE, names[i]} end
  end
end

-- validated: writes start here, with the generation, written at once so
-- that it is the call's first write (see Out of memory above).
local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
ctx.replay = true
local g = int(expect + 1)
redis.call('HSET', rk, 'g', g)
-- the new generation goes into the meta and the states of the reset
-- tasks too (lib_codec.lua), so their events and attempt records carry it
r.gen = g
if not run_to(ctx, rk, id, r, 'U') then return {ILLEGAL} end
local x = key(ctx.base, 'x', id)
for _, i in ipairs(reset) do
  local name, t = names[i], states[i]
  local was = t.st
  -- a final attempt folded into the state (format version 8) becomes a
  -- record of its own first: the reset below clears what it is read from
  if folded(hget(rk, 'd:' .. name)) then unfold(rk, name, t) end
  t.attempt, t.resolved, t.satisfied, t.gen = 0, 0, 0, g
  if not task_to(ctx, rk, id, r, name, t, 'P', heads[i]) then return {ILLEGAL} end
  for _, f in ipairs({'e:', 'r:', 'g:'}) do
    if hget(rk, f .. name) then hdel(rk, f .. name) end
  end
  -- the latest progress report leaves the task and stays with its
  -- attempt's record (task_progress.lua)
  local pg = hget(rk, 'pg:' .. name)
  if pg then
    hset(rk, 'pg:' .. name .. ':' .. (string.match(pg, '^(%d+),') or '0'), pg)
    hdel(rk, 'pg:' .. name)
  end
  if was == 'F' or was == 'D' then
    redis.call('LREM', x, 0, name)
    redis.call('ZREM', key(ctx.base, 'dl'), entry(id, name))
  end
end
ctx.replay = nil

-- Count each reset task's edges from the parents that stay done, then
-- release those whose dependencies are decided, as a finish would.
for _, i in ipairs(reset) do
  local t = state_get(rk, names[i])
  local us = hget(rk, 'u:' .. names[i])
  if us then
    for _, e in ipairs(edges(us)) do
      local p = pos[e.name]
      if not p then return {CORRUPT} end
      local ps = states[p].st
      if task_final[ps] then
        t.resolved = t.resolved + 1
        if met(e.cond, ps, r.strat) then t.satisfied = t.satisfied + 1 end
      end
    end
  end
  state_put(rk, names[i], t)
end
for _, i in ipairs(reset) do
  local name, h = names[i], heads[i]
  local t = state_get(rk, name)
  if t and t.st == 'P' then
    local due, skip
    if h.join == '1' then
      due = h.deps == 0 or t.satisfied >= 1
      skip = t.satisfied == 0 and h.deps > 0 and t.resolved == h.deps
    else
      due = t.satisfied == h.deps
      skip = (not due) and t.resolved > t.satisfied
    end
    if due then
      if not make_due(ctx, rk, id, r, name, t, h) then return {ILLEGAL} end
    elseif skip then
      if not task_to(ctx, rk, id, r, name, t, 'K', h) then return {ILLEGAL} end
      if not release_children(ctx, rk, id, r, name, 'K') then return {CORRUPT} end
    end
  end
end

redis.call('PERSIST', rk)
redis.call('PERSIST', x)
redis.call('PERSIST', key(ctx.base, 'tl', id))
-- every payload the run keeps apart, the reset tasks' and the others': a
-- failed task this replay leaves alone keeps its payload for a later one
-- however long this generation runs (a missing key is left alone)
if #names <= apart_max_tasks then
  for _, name in ipairs(names) do redis.call('PERSIST', key(ctx.base, 'p', id, name)) end
end
local k = hget(rk, 'k')
if k then redis.call('PERSIST', key(ctx.base, 'k', k)) end
if not finish_run(ctx, rk, id, r) then meta_put(rk, r) end
if ctx.refused then return {ILLEGAL} end
flush()
wake(ctx)
local out = {OK, #reset}
for _, i in ipairs(reset) do out[#out + 1] = names[i] end
for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
return out
