-- claim.lua: move due delayed tasks to ready, then claim up to a limit of
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority (claim_tasks in
-- lib_claim.lua).
--
-- KEYS[1]          <prefix>:{s}:active          lease zset
-- KEYS[1+5(i-1)+1] <prefix>:{s}:z:<queue i>     delayed zset of the i-th queue
-- KEYS[1+5(i-1)+2..+5] <prefix>:{s}:q:<queue i>:3 .. :0   ready lists, urgent .. low
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (run hashes and payload keys of popped entries)
-- ARGV[3]  worker id
-- ARGV[4]  limit (tasks)
-- ARGV[5]  lease duration in ms
-- ARGV[6]  number of queues
-- ARGV[7]  most due delayed tasks moved per queue
--
-- Transition: task W -> R and Y -> R (due delayed tasks), task R -> U
-- (claimed: epoch + 1, lease in the active zset); run P -> U on its first
-- claim.
--
-- Returns {nowMs, nextDueMs (0: none), n, then per task:
--   runId, task, epoch, leaseUntilMs, definition, parents, payload,
--   attempt, firstStartMs, k (parents that succeeded), then k pairs
--   parentName, result}.
-- Entries whose task is no longer ready (cancelled or stopped runs, expired
-- runs), or whose move is refused, are dropped on the way: lazy deletion.
--
-- Retried: claims another batch. The batch of a call whose reply was lost
-- stays leased to the worker, which does not know it holds it, until the
-- leases expire and a sweep requeues those tasks (counting a crash each).
-- This is a known problem.
-- Out of memory: the first write is a removal (the ZREM of a due delayed
-- entry, else the LPOP of a ready entry), which Redis allows, and a script
-- that has written is let through to its end: a claim runs whole.

local ctx = new_ctx(ARGV[2], now_ms(ARGV[1]), 0)
local nq = tonumber(ARGV[6])
local qkeys = {}
for i = 1, 5 * nq do qkeys[i] = KEYS[1 + i] end
local out = {}
claim_tasks(ctx, KEYS[1], qkeys, nq, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[7]), out)
return out
