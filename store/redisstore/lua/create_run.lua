-- create_run.lua: store a new run and make its root tasks ready or delayed.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash (must not exist)
-- KEYS[2]  <prefix>:{s}:wake      shard wake list
-- KEYS[3]  <prefix>:{s}:k:<key>   idempotency key index (only for keyed runs)
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (for the ready and delayed keys of root tasks)
-- ARGV[3]  run id
-- ARGV[4]  strategy letter (c continue, s stop, k skip)
-- ARGV[5]  number of tasks n
-- ARGV[6]  number of hash fields f (pairs) that follow the roots
-- ARGV[7]  number of root tasks
-- ARGV[8..]  root task names, then f field/value pairs (o, i, k, d:<task>, s:<task> ...)
--
-- Returns {0, createdMs} when created (also when this very id was created by
-- an earlier try of the same call), {1, existingRunId} when the key is taken.

local rk, wk = KEYS[1], KEYS[2]
local id = ARGV[3]
if KEYS[3] then
  local old = redis.call('GET', KEYS[3])
  if old then
    if old == id then
      local r = meta_get(rk)
      if r then return {0, int(r.created)} end
    end
    return {1, old}
  end
end
local r = meta_get(rk)
if r then return {0, int(r.created)} end

local ctx = {base = ARGV[2], now = now_ms(ARGV[1]), retention = 0, woken = 0}
local n = tonumber(ARGV[5])
local nf = tonumber(ARGV[6])
local nroots = tonumber(ARGV[7])
local first = 8 + nroots

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
r = {st = 'P', total = n, succ = 0, failed = 0, skipped = 0, cancelled = 0,
  created = ctx.now, started = nil, ended = nil, strat = ARGV[4]}
meta_put(rk, r)
if KEYS[3] then redis.call('SET', KEYS[3], id) end

for a = 8, first - 1 do
  local name = ARGV[a]
  local h = def_get(rk, name)
  local t = state_get(rk, name)
  make_due(ctx, rk, id, r, name, t, h)
end
wake(wk, ctx.woken)
return {0, int(ctx.now)}
