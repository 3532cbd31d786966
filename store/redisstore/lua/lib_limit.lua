-- lib_limit.lua: fleet-wide limits (plait.Limiter). A task's limits are
-- its run hash field l:<task>, "key,concurrency,rate,perMs" per limit, ';'
-- separated, written at create. The state of a limit key, in keys built
-- from the shard base (keys.go limitHolders and the rest):
--   l:<key>   set of the running tasks holding a slot, "<run> <task>"
--   lr:<key>  zset of the starts in the rate window, "<run> <task> <epoch>"
--             by start ms; trimmed by each check, PEXPIRE the window
--   lw:<key>  list of the ready tasks held back on the key, oldest first
--   ld        zset of the keys with tasks held back by a rate, by the ms
--             the window lets one more start
-- A claim admits a task or holds it back (limit_admit, in the claim's own
-- call); the one status function releases the slots of an attempt that
-- ends (limit_release from task_to), so every way out of running (a
-- finish of any outcome, a sweep, a cancel) releases, in the step that
-- ends the attempt, and SREM makes a second release of the same slot free
-- nothing: retried or replayed steps release once. A running task given
-- back unfinished keeps its place: its slots go back with limit_keep,
-- waking nobody, and it goes to the head of its ready list.

-- limit_hold keeps entry e (task name of run hash rk) waiting on key lk;
-- it returns false and the key, for the caller's task_waiting event.
local function limit_hold(ctx, rk, name, e, lk)
  redis.call('RPUSH', key(ctx.base, 'lw', lk), e)
  redis.call('HSET', rk, 'g:' .. name, 'limit ' .. lk)
  return false, lk
end

-- limit_admit checks the limits l (field l:) of entry e at ctx.now: when
-- each allows, it takes a slot of each concurrency limit and a start of
-- each rate limit (member tagged with epoch, the epoch the claim gives)
-- and returns true; otherwise it holds the task back on the first key
-- that refuses, scheduling the key's wake-up in ld for a rate, and
-- returns false and that key.
local function limit_admit(ctx, rk, name, e, l, epoch)
  local ls = {}
  for k, c, r, p in string.gmatch(l, '([^,;]+),(%d+),(%d+),(%d+)') do
    ls[#ls + 1] = {k, tonumber(c), tonumber(r), tonumber(p)}
  end
  for _, x in ipairs(ls) do
    local k, c, r, p = x[1], x[2], x[3], x[4]
    if c > 0 and redis.call('SCARD', key(ctx.base, 'l', k)) >= c then
      return limit_hold(ctx, rk, name, e, k)
    end
    if r > 0 then
      local rz = key(ctx.base, 'lr', k)
      redis.call('ZREMRANGEBYSCORE', rz, '-inf', ctx.now - p)
      local n = redis.call('ZCARD', rz)
      if n >= r then
        local oldest = redis.call('ZRANGE', rz, n - r, n - r, 'WITHSCORES')
        local at = tonumber(oldest[2]) + p
        local ld = key(ctx.base, 'ld')
        local cur = redis.call('ZSCORE', ld, k)
        if not cur or tonumber(cur) > at then
          redis.call('ZADD', ld, at, k)
          ctx.ld_first = nil -- limit_next reads ld again
        end
        return limit_hold(ctx, rk, name, e, k)
      end
    end
  end
  for _, x in ipairs(ls) do
    if x[2] > 0 then redis.call('SADD', key(ctx.base, 'l', x[1]), e) end
    if x[3] > 0 then
      local rz = key(ctx.base, 'lr', x[1])
      redis.call('ZADD', rz, ctx.now, e .. ' ' .. epoch)
      redis.call('PEXPIRE', rz, x[4])
    end
  end
  return true
end

-- limit_wake puts up to n live tasks waiting on key lk (all of them, up
-- to 1000, when n < 0) back at the heads of their ready lists, oldest
-- first, owing their queues a wake-up token; entries of tasks no longer
-- ready are dropped. It reports whether tasks were left waiting.
local function limit_wake(ctx, lk, n)
  local wk = key(ctx.base, 'lw', lk)
  local back = {}
  local seen = 0
  while n ~= 0 and seen < 1000 do
    local e = redis.call('LPOP', wk)
    if not e then break end
    seen = seen + 1
    local id, name = parse_entry(e)
    local rk = id and key(ctx.base, 'r', id)
    local t = rk and state_get(rk, name)
    if t and t.st == 'R' then
      back[#back + 1] = {id, name, rk}
      n = n - 1
    end
  end
  for i = #back, 1, -1 do
    local id, name, rk = back[i][1], back[i][2], back[i][3]
    local h = def_get(rk, name)
    if h then
      push_front(ctx, id, name, h)
      hdel(rk, 'g:' .. name)
    end
  end
  return seen == 1000
end

-- limit_release gives back the concurrency slots task name of run id
-- holds, as its running attempt ends, and lets the oldest live task
-- waiting on each freed key go back to its ready list.
local function limit_release(ctx, rk, id, name)
  local l = hget(rk, 'l:' .. name)
  if not l then return end
  local e = entry(id, name)
  for k, c in string.gmatch(l, '([^,;]+),(%d+),%d+,%d+') do
    if c ~= '0' and redis.call('SREM', key(ctx.base, 'l', k), e) == 1 then
      limit_wake(ctx, k, 1)
    end
  end
end

-- limit_keep gives back the concurrency slots task name of run id holds
-- as its running attempt is given back unfinished (its lease lost,
-- released at shutdown, returned unstarted), without waking the tasks
-- waiting on its keys: the caller puts the task back at the head of its
-- ready list, first in line for them. It reports whether the task held a
-- slot; limit_release, from the status move that follows, finds none left.
local function limit_keep(ctx, rk, id, name)
  local l = hget(rk, 'l:' .. name)
  if not l then return false end
  local e = entry(id, name)
  local kept = false
  for k, c in string.gmatch(l, '([^,;]+),(%d+),%d+,%d+') do
    if c ~= '0' and redis.call('SREM', key(ctx.base, 'l', k), e) == 1 then kept = true end
  end
  return kept
end

-- limit_wake_due lets the tasks held back by a rate whose window has moved
-- on try again: each key due in ld (at most 100 per call) is dropped from
-- it and its waiting tasks go back to their ready lists. It reads the
-- earliest wake-up first, and when none is due, which without rate limits
-- is always, that one read is all, and limit_next answers from it
-- (ctx.ld_first) unless a hold in between moved it.
local function limit_wake_due(ctx)
  local ld = key(ctx.base, 'ld')
  local first = redis.call('ZRANGE', ld, '0', '0', 'WITHSCORES')
  ctx.ld_first = first
  if not first[2] or tonumber(first[2]) > ctx.now then return end
  ctx.ld_first = nil
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', ld, '-inf', ctx.nows, 'LIMIT', '0', '100')) do
    redis.call('ZREM', ld, k)
    if limit_wake(ctx, k, -1) then redis.call('ZADD', ld, ctx.nows, k) end
  end
end

-- limit_next returns the earliest rate wake-up in ld (0: none).
local function limit_next(ctx)
  local first = ctx.ld_first or redis.call('ZRANGE', key(ctx.base, 'ld'), '0', '0', 'WITHSCORES')
  if first[2] then return tonumber(first[2]) end
  return 0
end
