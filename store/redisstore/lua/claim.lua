-- claim.lua: move due delayed tasks to ready, then claim up to a limit of
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority.
--
-- KEYS[1]          <prefix>:{s}:active          lease zset
-- KEYS[1+5(i-1)+1] <prefix>:{s}:z:<queue i>     delayed zset of the i-th queue
-- KEYS[1+5(i-1)+2..+5] <prefix>:{s}:q:<queue i>:3 .. :0   ready lists, urgent .. low
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (run hashes of popped entries)
-- ARGV[3]  worker id
-- ARGV[4]  limit (tasks)
-- ARGV[5]  lease duration in ms
-- ARGV[6]  number of queues
-- ARGV[7]  most due delayed tasks moved per queue
--
-- Returns {nowMs, nextDueMs (0: none), n, then per task:
--   runId, task, epoch, leaseUntilMs, definition, attempt, firstStartMs,
--   k (parents that succeeded), then k pairs parentName, result}.
-- Entries whose task is no longer ready (cancelled or stopped runs, expired
-- runs) are dropped on the way: lazy deletion.

local ctx = {base = ARGV[2], now = now_ms(ARGV[1]), retention = 0, woken = 0}
local worker = ARGV[3]
local limit = tonumber(ARGV[4])
local lease = tonumber(ARGV[5])
local nq = tonumber(ARGV[6])
local bound = tonumber(ARGV[7])
local active = KEYS[1]
local until_ms = ctx.now + lease

local function parse_entry(e)
  local sp = string.find(e, ' ', 1, true)
  if not sp then return nil end
  return string.sub(e, 1, sp - 1), string.sub(e, sp + 1)
end

-- 1. promote due delayed tasks.
for qi = 1, nq do
  local b = 1 + 5 * (qi - 1)
  local due = redis.call('ZRANGEBYSCORE', KEYS[b + 1], '-inf', ctx.now, 'LIMIT', 0, bound)
  for _, e in ipairs(due) do
    redis.call('ZREM', KEYS[b + 1], e)
    local id, name = parse_entry(e)
    if id then
      local rk = key(ctx.base, 'r', id)
      local t = state_get(rk, name)
      local h = t and def_get(rk, name)
      if t and h and (t.st == 'W' or t.st == 'Y') then
        local p = tonumber(h.prio)
        if p and p >= 0 and p <= 3 then
          t.st = 'R'
          state_put(rk, name, t)
          redis.call('RPUSH', KEYS[b + 2 + (3 - p)], e)
        end
      end
    end
  end
end

-- 2. pop ready entries.
local out = {}
local n = 0
local stale = 0
for p = 3, 0, -1 do
  for qi = 1, nq do
    local lk = KEYS[1 + 5 * (qi - 1) + 2 + (3 - p)]
    while n < limit and stale < 1000 + limit do
      local e = redis.call('LPOP', lk)
      if not e then break end
      local id, name = parse_entry(e)
      local rk = id and key(ctx.base, 'r', id)
      local r = rk and meta_get(rk)
      local t = r and state_get(rk, name)
      local h, d
      if t then h, d = def_get(rk, name) end
      if not (r and t and h and t.st == 'R') then
        stale = stale + 1
      else
        t.st = 'U'
        t.epoch = t.epoch + 1
        if t.attempt == 0 then t.attempt = 1 end
        t.worker = worker
        if not t.first then t.first = ctx.now - r.created end
        t.claim = ctx.now - r.created
        state_put(rk, name, t)
        redis.call('ZADD', active, until_ms, e)
        if r.st == 'P' then
          r.st = 'U'
          r.started = ctx.now - r.created
          meta_put(rk, r)
        end
        n = n + 1
        out[#out + 1] = id
        out[#out + 1] = name
        out[#out + 1] = int(t.epoch)
        out[#out + 1] = int(until_ms)
        out[#out + 1] = d
        out[#out + 1] = int(t.attempt)
        out[#out + 1] = int(r.created + t.first)
        local results = {}
        for _, pn in ipairs(h.parents) do
          local ps = state_get(rk, pn)
          if ps and ps.st == 'S' then
            results[#results + 1] = pn
            results[#results + 1] = redis.call('HGET', rk, 'r:' .. pn) or ''
          end
        end
        out[#out + 1] = #results / 2
        for _, v in ipairs(results) do out[#out + 1] = v end
      end
    end
  end
end

-- 3. the earliest live delayed due time on these queues.
local next_due = 0
for qi = 1, nq do
  local zk = KEYS[1 + 5 * (qi - 1) + 1]
  for _ = 1, 16 do
    local first = redis.call('ZRANGE', zk, 0, 0, 'WITHSCORES')
    if #first == 0 then break end
    local id, name = parse_entry(first[1])
    local t = id and state_get(key(ctx.base, 'r', id), name)
    if t and (t.st == 'W' or t.st == 'Y') then
      local due = tonumber(first[2])
      if next_due == 0 or due < next_due then next_due = due end
      break
    end
    redis.call('ZREM', zk, first[1])
  end
end

local res = {int(ctx.now), int(next_due), n}
for _, v in ipairs(out) do res[#res + 1] = v end
return res
