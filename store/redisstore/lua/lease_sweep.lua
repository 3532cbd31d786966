-- lease_sweep.lua: recover running tasks whose lease deadline has passed.
--
-- KEYS[1]  <prefix>:{s}:active   lease zset
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (run hashes of expired entries, ready
--          queues and wake lists, payload keys, dead-letter lists and the
--          index dl)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  limit (entries)
-- ARGV[5]  crash limit
--
-- Transition: task U -> R (requeued: crashes + 1, epoch + 1), or U -> D
-- past the crash limit, with what a failure brings (lib_finish.lua:
-- children, strategy stop, the run's end: run U -> S, U -> F).
--
-- Returns {more (0/1), n, then per entry: kind ('q' requeued, 'd' dead,
-- 'c' corrupt or refused move), run id, task, old epoch or reason}.
-- Each entry is handled on its own; one that cannot be read, or whose move
-- is refused, is removed from the lease zset and reported, never aborting
-- the batch. Pushes one wake-up token per requeued task, to its queue's
-- wake list.
--
-- Limits (lib_limit.lua): a task leaving running gives back its slots
-- (SREM from l:<key>). A requeued task that held a slot keeps its place
-- (limit_keep): it goes to the head of its ready list (LPUSH) and wakes no
-- task waiting on its keys. For a dead one each slot freed puts the oldest
-- live task waiting on the key back at the head of its ready list (LPOP of
-- lw:<key>, LPUSH, HDEL of g:<task>, a wake-up token).
-- Events: one per task recovered (task_ready or task_dead, with the
-- attempt's duration) and per move it brings (children, the run's end),
-- written last (flush_events); crashes counted in <base>st, and with
-- WithStats the tasks that died and the runs that failed in the minute's
-- field of <base>sm:<hour>:<counter> (flush_series; a lost hash reads as
-- zeros). A call that recovered nothing makes none.
--
-- Queue registry: a push that makes a queue's ready list or delayed set
-- go from empty to non-empty adds the queue to the shard's registry qn
-- (SADD, register_queue in lib_buffers.lua; QueueList reads it). A resend
-- adds it again to no effect; Redis full refuses it with the script's
-- other writes, as below; a registry Redis lost is written again by the
-- next such push, and lists nothing meanwhile.
-- Retried: the entries the first call handled are gone from the lease
-- zset; a retry handles the next expired ones, if any, once each, and
-- gives back no slot twice (an SREM of a slot already given back frees
-- nothing).
-- Lost data: an expired entry whose run hash Redis lost is removed and
-- reported as 'c' (run record missing), never requeued. A running task
-- whose lease entry was lost is found by no sweep until its worker
-- extends it (lease_extend's ZADD puts the entry back) or the janitor's
-- lease audit, which lists running tasks against the lease entries, gives
-- it a lease again (a sweep then requeues it once that lease runs out);
-- meanwhile its worker may still finish it. A lost l:<key> forgets holders, so the
-- key admits more than its limit until they end (their SREM then finds
-- nothing); a lost lw:<key> forgets who waited, and those tasks stay ready
-- but out of every list until their run is cancelled (the store cannot find
-- them again without a scan).
-- Out of memory: the function is declared allow-oom and runs whole; on the
-- EVALSHA path the first write is the removal of the first expired lease
-- entry, which Redis allows, and the call then runs whole too. The
-- releases shrink memory; the waiter moved back costs one list entry it
-- already had. Its events are written last, under allow-oom like the rest:
-- a full Redis still applies the step, and its events with it; the
-- streams are trimmed as they grow, so they stay within their caps.
-- Cut off: the sweep is how the tasks of a worker cut off from Redis come
-- back: their leases expire and the sweep requeues them under a new epoch
-- (a crash each), so the cut-off worker's late finishes answer STALE.
-- Every process sweeps, so a sweeper that is cut off itself leaves the
-- work to the others; the call is atomic and each entry is handled once.

local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
ctx.crash = true -- a task this call moves off running lost its lease
local active = KEYS[1]
local limit = tonumber(ARGV[4])
local crash_limit = tonumber(ARGV[5])
local dead_error = 'lease lost too many times'

local expired = redis.call('ZRANGEBYSCORE', active, '-inf', '(' .. int(ctx.now), 'LIMIT', 0, limit + 1)
local more = 0
if #expired > limit then more = 1 end
local out = {}
local n = 0

local function sweep_one(e)
  local id, name = parse_entry(e)
  if not id then return 'c', e, '', 'bad lease entry' end
  local rk = key(ctx.base, 'r', id)
  local r = meta_get(rk)
  if not r then return 'c', id, name, 'run record missing or unreadable' end
  local t = state_get(rk, name)
  if not t then return 'c', id, name, 'task record missing or unreadable' end
  local h = def_get(rk, name)
  if not h then return 'c', id, name, 'task definition unreadable' end
  if t.st ~= 'U' then return nil end
  local to = 'R'
  if t.crashes + 1 > crash_limit then to = 'D' end
  if not task_can(t.st, to) then return 'c', id, name, 'illegal status transition U -> ' .. to end
  -- validated: writes start here.
  ctx.refused = nil
  local old = t.epoch
  t.crashes = t.crashes + 1
  attempt(rk, name, t, r, ctx.now, 'c', '')
  t.epoch = t.epoch + 1
  local kind
  if to == 'D' then
    kind = 'd'
    redis.call('HSET', rk, 'e:' .. name, dead_error)
    fail_task(ctx, rk, id, r, name, t, 'D', h)
  else
    kind = 'q'
    local kept = limit_keep(ctx, rk, id, name)
    task_to(ctx, rk, id, r, name, t, 'R', h)
    set_queued(rk, name, offset(ctx, r))
    if kept then
      push_front(ctx, id, name, h)
    else
      push_ready(ctx, id, name, h)
    end
  end
  if not run_terminal(r) then
    meta_put(rk, r)
    finish_run(ctx, rk, id, r)
  end
  if ctx.refused then return 'c', id, name, 'illegal status transition' end
  return kind, id, name, int(old)
end

for i = 1, math.min(#expired, limit) do
  local e = expired[i]
  redis.call('ZREM', active, e)
  local kind, id, name, extra = sweep_one(e)
  if kind then
    n = n + 1
    out[#out + 1] = kind
    out[#out + 1] = id
    out[#out + 1] = name
    out[#out + 1] = extra
  end
end
flush()
wake(ctx)
local res = {more, n}
for _, v in ipairs(out) do res[#res + 1] = v end
return res
