-- common.lua: helpers prepended to every script (see scripts.go). It makes
-- no redis call of its own except through the functions below.
--
-- Encodings (mirrored by codec.go):
--   run hash field m    "st,total,succ,failed,skipped,cancelled,createdMs,startedOff,endedOff,strategy"
--                        st: P pending U running S completed F failed C cancelled
--                        strategy: c continue, s stop, k skip; offsets are ms after createdMs
--   run hash field o    task names in definition order, separated by ' '
--   run hash field k    idempotency key (only for keyed runs)
--   field s:<task>      "st,attempt,epoch,crashes,resolved,satisfied,firstStartOff,claimOff,endOff,worker"
--                        st: P pending (waiting for deps) W pending (due, in the delayed set)
--                            R ready U running Y retrying S succeeded F failed
--                            K skipped C cancelled D dead
--   field d:<task>      "queue,prio,runAtMs,delayMs,join,parents,children\n" .. Go-encoded spec
--                        parents/children: "name:cond" separated by ' '
--   field r:<task>      result bytes; e:<task> error text
--   field a:<task>      attempt records, each "attempt,epoch,startOff,durMs,outcome,wlen,elen;" .. worker .. error
--   field x             dead-lettered task names separated by ' '

local function now_ms(arg)
  local n = tonumber(arg)
  if n then return n end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- split s on the plain one-character separator sep, into at most max parts
-- (the last part keeps the rest).
local function split(s, sep, max)
  local out = {}
  if s == nil or s == '' then return out end
  local i = 1
  while true do
    if max and #out == max - 1 then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    local j = string.find(s, sep, i, true)
    if not j then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end

local function num(s) return tonumber(s) end
local function int(n) return string.format('%d', n) end
local function opt(n) if n == nil then return '' end return int(n) end

-- key builds a shard-local key from the shard base ("<prefix>:{<shard>}:"),
-- mirroring keys.go. Only used for keys a script discovers while running;
-- they share the slot of the keys in KEYS by construction.
local function key(base, kind, a, b)
  if b ~= nil then return base .. kind .. ':' .. a .. ':' .. b end
  if a ~= nil then return base .. kind .. ':' .. a end
  return base .. kind
end

local function meta_get(rk)
  local m = redis.call('HGET', rk, 'm')
  if not m then return nil end
  local f = split(m, ',')
  if #f ~= 10 then return false end
  local r = {st = f[1], total = num(f[2]), succ = num(f[3]), failed = num(f[4]),
    skipped = num(f[5]), cancelled = num(f[6]), created = num(f[7]),
    started = num(f[8]), ended = num(f[9]), strat = f[10]}
  if not (r.total and r.succ and r.failed and r.skipped and r.cancelled and r.created) then
    return false
  end
  return r
end

local function meta_put(rk, r)
  redis.call('HSET', rk, 'm', r.st .. ',' .. int(r.total) .. ',' .. int(r.succ) .. ',' ..
    int(r.failed) .. ',' .. int(r.skipped) .. ',' .. int(r.cancelled) .. ',' ..
    int(r.created) .. ',' .. opt(r.started) .. ',' .. opt(r.ended) .. ',' .. r.strat)
end

local function run_terminal(r)
  return r.st == 'S' or r.st == 'F' or r.st == 'C'
end

local function state_get(rk, name)
  local s = redis.call('HGET', rk, 's:' .. name)
  if not s then return nil end
  local f = split(s, ',', 10)
  if #f ~= 10 then return false end
  local t = {st = f[1], attempt = num(f[2]), epoch = num(f[3]), crashes = num(f[4]),
    resolved = num(f[5]), satisfied = num(f[6]), first = num(f[7]), claim = num(f[8]),
    ended = num(f[9]), worker = f[10]}
  if not (t.attempt and t.epoch and t.crashes and t.resolved and t.satisfied) then
    return false
  end
  return t
end

local function state_put(rk, name, t)
  redis.call('HSET', rk, 's:' .. name, t.st .. ',' .. int(t.attempt) .. ',' .. int(t.epoch) .. ',' ..
    int(t.crashes) .. ',' .. int(t.resolved) .. ',' .. int(t.satisfied) .. ',' ..
    opt(t.first) .. ',' .. opt(t.claim) .. ',' .. opt(t.ended) .. ',' .. t.worker)
end

local function task_terminal(st)
  return st == 'S' or st == 'F' or st == 'K' or st == 'C' or st == 'D'
end

-- def_get parses the Lua-readable header of a task definition.
local function def_get(rk, name)
  local d = redis.call('HGET', rk, 'd:' .. name)
  if not d then return nil end
  local nl = string.find(d, '\n', 1, true)
  if not nl then return false end
  local f = split(string.sub(d, 1, nl - 1), ',')
  if #f ~= 7 then return false end
  local h = {queue = f[1], prio = f[2], runat = num(f[3]), delay = num(f[4]), join = f[5],
    parents = {}, children = {}}
  if not (h.runat and h.delay) or h.queue == '' then return false end
  for _, p in ipairs(split(f[6], ' ')) do
    local e = split(p, ':')
    h.parents[#h.parents + 1] = e[1]
  end
  for _, c in ipairs(split(f[7], ' ')) do
    local e = split(c, ':')
    h.children[#h.children + 1] = {name = e[1], cond = e[2]}
  end
  return h, d
end

-- attempt appends one attempt record for the task's current claim.
local function attempt(rk, name, t, r, now, outcome, err)
  err = err or ''
  local claim = t.claim or 0
  local rec = int(t.attempt) .. ',' .. int(t.epoch) .. ',' .. int(claim) .. ',' ..
    int(now - r.created - claim) .. ',' .. outcome .. ',' .. int(#t.worker) .. ',' .. int(#err) ..
    ';' .. t.worker .. err
  local f = 'a:' .. name
  local old = redis.call('HGET', rk, f) or ''
  redis.call('HSET', rk, f, old .. rec)
end

-- met mirrors plait.Condition.Met: cond '0' OnSuccess, '1' OnCompletion,
-- '2' OnFailure; under strategy skip a failed or dead parent counts as skipped.
local function met(cond, ps, strat)
  if strat == 'k' and (ps == 'F' or ps == 'D') then ps = 'K' end
  if cond == '0' then return ps == 'S' end
  if cond == '2' then return ps == 'F' or ps == 'D' end
  if cond == '1' then return ps == 'S' or ps == 'F' or ps == 'D' or ps == 'K' end
  return false
end

-- ctx carries what the transition helpers need: ctx.base, ctx.now,
-- ctx.retention (ms), ctx.woken (tasks readied or delayed by this call).
local function entry(id, name) return id .. ' ' .. name end

local function push_ready(ctx, id, name, h)
  redis.call('RPUSH', key(ctx.base, 'q', h.queue, h.prio), entry(id, name))
  ctx.woken = ctx.woken + 1
end

local function push_delayed(ctx, id, name, h, due)
  redis.call('ZADD', key(ctx.base, 'z', h.queue), due, entry(id, name))
  ctx.woken = ctx.woken + 1
end

-- make_due schedules a task whose dependencies are met: due at
-- max(now, runAt, created + delay); ready at once when due <= now.
local function make_due(ctx, rk, id, r, name, t, h)
  local due = ctx.now
  if h.runat > 0 and h.runat > due then due = h.runat end
  if h.delay > 0 and r.created + h.delay > due then due = r.created + h.delay end
  if due <= ctx.now then
    t.st = 'R'
    push_ready(ctx, id, name, h)
  else
    t.st = 'W'
    push_delayed(ctx, id, name, h, due)
  end
  state_put(rk, name, t)
end

local function count_end(r, st)
  if st == 'S' then r.succ = r.succ + 1
  elseif st == 'F' or st == 'D' then r.failed = r.failed + 1
  elseif st == 'K' then r.skipped = r.skipped + 1
  elseif st == 'C' then r.cancelled = r.cancelled + 1 end
end

-- end_task moves t to the terminal status st and counts it.
local function end_task(ctx, r, t, st)
  t.st = st
  t.ended = ctx.now - r.created
  count_end(r, st)
end

-- release_children resolves the edges out of a task that just ended, and of
-- every task skipped as a consequence, with a worklist (no recursion).
-- Returns false when a record on the way cannot be read.
local function release_children(ctx, rk, id, r, name, st)
  local work = {{name = name, st = st}}
  while #work > 0 do
    local p = table.remove(work)
    local ph = def_get(rk, p.name)
    if not ph then return false end
    for _, e in ipairs(ph.children) do
      local c = state_get(rk, e.name)
      local ch = def_get(rk, e.name)
      if not c or not ch then return false end
      if c.st == 'P' then
        c.resolved = c.resolved + 1
        if met(e.cond, p.st, r.strat) then c.satisfied = c.satisfied + 1 end
        local deps = #ch.parents
        local due, skip
        if ch.join == '1' then
          due = c.satisfied >= 1
          skip = (not due) and c.resolved == deps
        else
          due = c.satisfied == deps
          skip = (not due) and c.resolved > c.satisfied
        end
        if due then
          make_due(ctx, rk, id, r, e.name, c, ch)
        elseif skip then
          end_task(ctx, r, c, 'K')
          state_put(rk, e.name, c)
          work[#work + 1] = {name = e.name, st = 'K'}
        else
          state_put(rk, e.name, c)
        end
      end
    end
  end
  return true
end

-- run_ended is called once when a run reaches a terminal status: its keys
-- start their retention and RunWait callers wake up.
local function run_ended(ctx, rk, id)
  local dk = key(ctx.base, 'w', id)
  redis.call('RPUSH', dk, '1')
  if ctx.retention > 0 then
    redis.call('PEXPIRE', rk, ctx.retention)
    redis.call('PEXPIRE', dk, ctx.retention)
    local k = redis.call('HGET', rk, 'k')
    if k then redis.call('PEXPIRE', key(ctx.base, 'k', k), ctx.retention) end
  end
end

-- stop_run cancels every unfinished task and ends the run with status st.
-- Running tasks lose their lease (epoch + 1, attempt record "cancelled").
local function stop_run(ctx, rk, id, r, st, reason)
  local active = key(ctx.base, 'active')
  for _, name in ipairs(split(redis.call('HGET', rk, 'o') or '', ' ')) do
    local t = state_get(rk, name)
    if t and not task_terminal(t.st) then
      if t.st == 'U' then
        t.epoch = t.epoch + 1
        attempt(rk, name, t, r, ctx.now, 'x', reason)
        redis.call('ZREM', active, entry(id, name))
      end
      if reason ~= '' then redis.call('HSET', rk, 'e:' .. name, reason) end
      end_task(ctx, r, t, 'C')
      state_put(rk, name, t)
    end
  end
  r.st = st
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  run_ended(ctx, rk, id)
end

-- finish_run ends the run once every task is terminal.
local function finish_run(ctx, rk, id, r)
  if run_terminal(r) then return end
  if r.succ + r.failed + r.skipped + r.cancelled < r.total then return end
  if r.failed > 0 and r.strat ~= 'k' then r.st = 'F' else r.st = 'S' end
  r.ended = ctx.now - r.created
  meta_put(rk, r)
  run_ended(ctx, rk, id)
end

-- fail_task ends t as failed or dead, dead-letters it and applies the run's
-- error strategy. t is written by this function.
local function fail_task(ctx, rk, id, r, name, t, st)
  end_task(ctx, r, t, st)
  state_put(rk, name, t)
  local x = redis.call('HGET', rk, 'x')
  if x then x = x .. ' ' .. name else x = name end
  redis.call('HSET', rk, 'x', x)
  if r.strat == 's' then
    stop_run(ctx, rk, id, r, 'F', '')
    return true
  end
  return release_children(ctx, rk, id, r, name, st)
end

-- wake pushes up to min(n, 64 - LLEN) tokens to the shard wake list.
local function wake(wk, n)
  if n <= 0 then return end
  local room = 64 - redis.call('LLEN', wk)
  if n > room then n = room end
  for _ = 1, n do redis.call('RPUSH', wk, '1') end
end
