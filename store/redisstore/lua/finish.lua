-- finish.lua: record the outcomes of attempts, each applied on its own.
--
-- KEYS[1]    <prefix>:{s}:active       lease zset
-- KEYS[2]    <prefix>:{s}:wake         shard wake list
-- KEYS[2+i]  <prefix>:{s}:r:<run i>    run hash of the i-th outcome
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (queues of released children, run-done list, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  number of outcomes n
-- ARGV[5+7(i-1) ..]  per outcome: run id, task, epoch, outcome (1 succeeded,
--          2 retry, 3 failed, 4 released), result, error, retry delay in ms
--
-- Returns 2n values: per outcome a code (0 applied, 1 not found, 2 stale
-- epoch, 4 corrupt record) and the run's status letter after it ('' when
-- the run is gone). A repeated call finds the epoch moved on and answers 2.

local ctx = {base = ARGV[2], now = now_ms(ARGV[1]), retention = tonumber(ARGV[3]), woken = 0}
local active = KEYS[1]
local n = tonumber(ARGV[4])
local out = {}

local function apply(rk, id, name, epoch, outcome, result, err, delay)
  local r = meta_get(rk)
  if r == nil then return 1, '' end
  if r == false then return 4, '' end
  local t = state_get(rk, name)
  if t == nil then return 1, r.st end
  if t == false then return 4, r.st end
  if t.st ~= 'U' or t.epoch ~= epoch then return 2, r.st end
  local h = def_get(rk, name)
  if not h then return 4, r.st end

  -- validated: writes start here.
  redis.call('ZREM', active, entry(id, name))
  if outcome == 1 then
    attempt(rk, name, t, r, ctx.now, 's', err)
    if result ~= '' then redis.call('HSET', rk, 'r:' .. name, result) end
    redis.call('HDEL', rk, 'e:' .. name)
    end_task(ctx, r, t, 'S')
    state_put(rk, name, t)
    release_children(ctx, rk, id, r, name, 'S')
  elseif outcome == 2 then
    attempt(rk, name, t, r, ctx.now, 'r', err)
    redis.call('HSET', rk, 'e:' .. name, err)
    t.attempt = t.attempt + 1
    if delay > 0 then
      t.st = 'Y'
      push_delayed(ctx, id, name, h, ctx.now + delay)
    else
      t.st = 'R'
      push_ready(ctx, id, name, h)
    end
    state_put(rk, name, t)
  elseif outcome == 3 then
    attempt(rk, name, t, r, ctx.now, 'f', err)
    redis.call('HSET', rk, 'e:' .. name, err)
    fail_task(ctx, rk, id, r, name, t, 'F')
  else
    attempt(rk, name, t, r, ctx.now, 'l', err)
    t.epoch = t.epoch + 1
    t.st = 'R'
    push_ready(ctx, id, name, h)
    state_put(rk, name, t)
  end
  if not run_terminal(r) then
    meta_put(rk, r)
    finish_run(ctx, rk, id, r)
  end
  return 0, r.st
end

for i = 1, n do
  local a = 5 + 7 * (i - 1)
  local code, st = apply(KEYS[2 + i], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]),
    tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5], tonumber(ARGV[a + 6]) or 0)
  out[#out + 1] = code
  out[#out + 1] = st
end
wake(KEYS[2], ctx.woken)
return out
