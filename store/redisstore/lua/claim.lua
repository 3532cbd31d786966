-- claim.lua: move due delayed tasks to ready, then claim up to a limit of
-- ready tasks, highest priority first, FIFO within one (queue, priority),
-- queue order as given across queues of one priority.
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
-- Returns {nowMs, nextDueMs (0: none), n, then per task:
--   runId, task, epoch, leaseUntilMs, definition, parents, payload,
--   attempt, firstStartMs, k (parents that succeeded), then k pairs
--   parentName, result}.
-- Entries whose task is no longer ready (cancelled or stopped runs, expired
-- runs) are dropped on the way: lazy deletion.

local ctx = new_ctx(ARGV[2], now_ms(ARGV[1]), 0)
local nq = tonumber(ARGV[6])
local qkeys = {}
for i = 1, 5 * nq do qkeys[i] = KEYS[1 + i] end
local out = {}
claim_tasks(ctx, KEYS[1], qkeys, nq, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[7]), out)
return out
