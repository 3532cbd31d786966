-- task_claim.lua: move due delayed tasks to ready, then claim up to a limit of
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority (claim_tasks in
-- lib_claim.lua).
--
-- KEYS[1]          <prefix>:{s}:active          lease zset
-- KEYS[1+6(i-1)+1] <prefix>:{s}:z:<queue i>     delayed zset of the i-th queue
-- KEYS[1+6(i-1)+2..+5] <prefix>:{s}:q:<queue i>:3 .. :0   ready lists, urgent .. low
-- KEYS[1+6(i-1)+6] <prefix>:{s}:g:<queue i>     aside index: handlers with tasks set aside
--                  (their lists <prefix>:{s}:g:<queue i>:<handler> are built from it)
-- KEYS[2+6q]       <prefix>:{s}:c:<request>     claim memory (only with a request id)
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (run hashes and payload keys of popped entries)
-- ARGV[3]  worker id
-- ARGV[4]  limit (tasks)
-- ARGV[5]  lease duration in ms
-- ARGV[6]  number of queues q
-- ARGV[7]  most due delayed tasks moved per queue
-- ARGV[8]  1: remember a claim that found nothing too (the caller goes on
--          to another shard), else 0
-- ARGV[9]  handlers the claimer runs, space separated, or '*' for any: a
--          task with another handler is set aside (lib_claim.lua)
-- ARGV[10] shares "<urgent>,<high>,<normal>,<low>": tasks each level takes
--          first (weighted mode), or '' for strict priority
--
-- Transition: task W -> R and Y -> R (due delayed tasks), task R -> U
-- (claimed: epoch + 1, lease in the active zset); run P -> U on its first
-- claim. A task set aside for want of its handler stays R.
--
-- Returns {nowMs, nextDueMs (0: none), n, claimed, then per task:
--   runId, task, epoch, leaseUntilMs, definition, parents, payload,
--   attempt, firstStartMs, info (the run's field i; '' when the task
--   before it in the reply is of the same run), k (parents that
--   succeeded), then k pairs parentName, result}; claimed is n, except in
--   a replay (below).
-- Entries whose task is no longer ready (cancelled or stopped runs, expired
-- runs), or whose move is refused, are dropped on the way: lazy deletion.
-- With a request id, the claimed tasks and their epochs are kept in the
-- claim memory for the lease duration (lib_claim.lua), one SET.
--
-- A task set aside pushes a wake-up token to the aside wake list of its
-- (queue, handler), "<aside list>:n" (at most 64), on which the ReadyWait
-- of processes with the handler blocks: the queue's token this claimer's
-- ReadyWait took was meant for whoever can run the task. The claim that
-- empties an aside list deletes its wake list. Tasks put back by a rate
-- window that the claim did not take owe their queues tokens, pushed at
-- the end.
-- Setting aside (RPUSH to an aside list, SADD to the aside index, HSET of
-- g:<task>) is part of the same call and goes with it, retried, lost or
-- refused, as the claim does. A set-aside task is never lost: it is in
-- exactly one aside list while ready, and a claim listing its handler (or
-- any handler) takes it.
-- Limits (lib_limit.lua): a task with limits (field l:) is admitted only
-- when each allows: SADD to l:<key>, ZADD of its start to lr:<key> (with
-- PEXPIRE of the window); otherwise it is held back: RPUSH to lw:<key>,
-- HSET of g:<task> "limit <key>", and for a rate a ZADD of the key's
-- wake-up time to ld. Keys due in ld first put their waiting tasks back at
-- the heads of their ready lists. All of it is part of the one call.
-- Events: task_ready per due delayed task moved, task_running per claim
-- and run_running per first claim of a run, written at the end of the
-- claim step (flush_events); a replay makes none.
--
-- Retried: with a request id, the memory is found first: the call claims
-- nothing and answers the tasks the first call claimed that are still
-- running under its epochs (read again, payloads and parents' results
-- included), with claimed = how many the first call claimed; nothing is
-- admitted again (a replay takes no slot). Without one it claims another
-- batch, and the batch of a call whose reply was lost stays leased to
-- nobody who knows it until the leases expire and a sweep requeues it,
-- counting a crash each and giving its slots back.
-- Lost data: an entry whose run hash Redis lost is dropped on the way
-- (lazy deletion) and nothing is leased for it. A lost claim memory makes
-- a resend with its request id claim another batch, as without one. A
-- failover to a replica that lagged can roll a run back to before a claim:
-- the task is ready again, and its next claim hands out an epoch a worker
-- of the lost claim still holds (docs/redis-schema.md: the store does not
-- fence that case). Lost limit keys: as task_finish.lua says.
-- Out of memory: the function is declared without allow-oom, so Redis
-- refuses the call up front, whole (its set-asides and admissions with
-- it), and the store answers ErrStoreFull (a claim leases more work and
-- grows the shard's memory). On the EVALSHA path the first write is a
-- removal (the ZREM of a due delayed entry, else the LPOP of a ready
-- entry), which Redis allows, and the call runs whole.
-- Cut off: the call is atomic: a worker cut off mid-call claimed its batch
-- whole or nothing. A batch it never heard of is answered again by a
-- resend with the same request id (Retried), or, while the worker stays
-- cut off, goes back to ready when its leases expire and a sweep requeues
-- it.

local ctx = new_ctx(ARGV[2], ARGV[1])
local nq = tonumber(ARGV[6])
local qkeys = {}
for i = 1, 6 * nq do qkeys[i] = KEYS[1 + i] end
local out = {}
local mk = KEYS[2 + 6 * nq]
local memo
if mk then
  local mem = redis.call('GET', mk)
  if mem then
    replay_claim(ctx, KEYS[1], qkeys, nq, mem, out)
    return out
  end
  memo = {}
end
claim_tasks(ctx, KEYS[1], qkeys, nq, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[7]), out, memo, handler_set(ARGV[9]), share_list(ARGV[10]))
wake(ctx)
if mk and (#memo > 0 or ARGV[8] == '1') then remember(mk, out, 0, memo, ARGV[5]) end
return out
