-- task_finish_claim.lua: record the outcomes of attempts exactly as
-- task_finish.lua does, then claim exactly as task_claim.lua does, in one
-- call: a worker hands back finished attempts and picks up the tasks they
-- released.
--
-- KEYS[1]              <prefix>:{s}:active          lease zset
-- KEYS[1+6(i-1)+1]     <prefix>:{s}:z:<queue i>     delayed zset of the i-th queue
-- KEYS[1+6(i-1)+2..+5] <prefix>:{s}:q:<queue i>:3 .. :0   ready lists, urgent .. low
-- KEYS[1+6(i-1)+6]     <prefix>:{s}:g:<queue i>     aside index (see task_claim.lua)
-- KEYS[1+6q+j]         <prefix>:{s}:r:<run j>       run hash of the j-th outcome
-- KEYS[2+6q+n]         <prefix>:{s}:c:<request>     claim memory (only with a request id)
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:"
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  worker id
-- ARGV[5]  claim limit (0: finish only)
-- ARGV[6]  lease duration in ms (also how long the claim memory is kept)
-- ARGV[7]  number of queues q
-- ARGV[8]  most due delayed tasks moved per queue
-- ARGV[9]  number of outcomes n
-- ARGV[10] handlers the claimer runs, as task_claim.lua's ARGV[9]
-- ARGV[11] shares, as task_claim.lua's ARGV[10]
-- ARGV[12+7(j-1) ..]  per outcome, as in task_finish.lua
--
-- Transition: those of task_finish.lua, then those of task_claim.lua.
-- The ready entries the finish made are not pushed before the claim: it
-- pops each list as its entries in Redis followed by those
-- (lib_handoff.lua), so a child it releases and claims goes from ready to
-- running without its entry being pushed and popped, in the order the
-- list gives; the entries it leaves are pushed after its pops.
--
-- Returns the 2n values of task_finish.lua, then, when the limit is at
-- least 1, the reply of task_claim.lua, then, when a finish left a task
-- that waits on all its parents still waiting, the fewest parents such a
-- task still waits on (TaskFinishClaimResult.ParentsLeft; a resend
-- answers without it). Wake-up tokens are pushed only for tasks made
-- ready or delayed by the finish that the claim did not take.
-- With a request id, the outcome codes and the claimed tasks are kept in
-- the claim memory (lib_claim.lua), one SET.
--
-- Limits: the releases of task_finish.lua, then the admissions of
-- task_claim.lua.
-- Events: those of task_finish.lua and task_claim.lua, written last
-- (flush_events), in one stream entry: the claim's first flush keeps the
-- finish's buffered.
-- Queue registry: a push that makes a queue's ready list or delayed set
-- go from empty to non-empty adds the queue to the shard's registry qn
-- (SADD, register_queue in lib_buffers.lua; QueueList reads it). A resend
-- adds it again to no effect; Redis full refuses it with the script's
-- other writes, as below; a registry Redis lost is written again by the
-- next such push, and lists nothing meanwhile.
-- Retried: with a request id, the memory is found first: the call applies
-- nothing and claims nothing, and answers the codes the first call's
-- outcomes got and, as task_claim.lua does, the tasks it claimed that are
-- still held. Without one, the finish part answers stale epoch for every
-- outcome the first call applied, changing nothing, and the claim part
-- claims another batch, which leaves the first batch leased until its
-- leases expire (see task_claim.lua).
-- Lost data: as task_finish.lua for the outcomes, then as task_claim.lua
-- for the claim. A lost claim memory makes a resend apply nothing twice
-- (the outcomes the first call applied answer STALE) and claim another
-- batch.
-- Out of memory: the function is declared without allow-oom, so Redis
-- refuses the call up front, whole; the store then applies the outcomes
-- with task_finish.lua, which Redis runs, and answers an empty claim. On
-- the EVALSHA path: as task_finish.lua, then as task_claim.lua.
-- Cut off: the call is atomic: a worker cut off mid-call finished and
-- claimed whole or not at all. A resend with its request id answers both
-- again (Retried); the tasks it claimed without learning of them go back
-- to ready when their leases expire and a sweep requeues them.

local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
local limit = tonumber(ARGV[5])
local nq = tonumber(ARGV[7])
local n = tonumber(ARGV[9])
local qkeys = {}
for i = 1, 6 * nq do qkeys[i] = KEYS[1 + i] end
local rks = {}
for j = 1, n do rks[j] = KEYS[1 + 6 * nq + j] end
local out = {}
local mk = KEYS[2 + 6 * nq + n]
local memo
if mk then
  local mem = redis.call('GET', mk)
  if mem then
    replay_finish(mem, out)
    if limit > 0 then replay_claim(ctx, KEYS[1], qkeys, nq, mem, out) end
    return out
  end
  memo = {}
end
finish_batch(ctx, KEYS[1], rks, ARGV, 12, n, out)
if limit > 0 then
  claim_tasks(ctx, KEYS[1], qkeys, nq, ARGV[4], limit, tonumber(ARGV[6]), tonumber(ARGV[8]), out, memo, handler_set(ARGV[10]), share_list(ARGV[11]))
end
flush()
wake(ctx)
if mk then remember(mk, out, n, memo or {}, ARGV[6]) end
-- last, and only when the finish left a join waiting: how many parents it
-- still waits on (see ctx.left in lib_finish.lua)
if ctx.left then out[#out + 1] = ctx.left end
return out
