-- task_finish.lua: record the outcomes of attempts, each applied on its own
-- (finish_batch in lib_finish.lua).
--
-- KEYS[1]    <prefix>:{s}:active       lease zset
-- KEYS[1+i]  <prefix>:{s}:r:<run i>    run hash of the i-th outcome
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (queues and wake lists of released
--          children, payload keys, dead-letter lists and the index dl, the
--          events channel, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  number of outcomes n
-- ARGV[5+7(i-1) ..]  per outcome: run id, task, epoch, outcome (1 succeeded,
--          2 retry, 3 failed, 4 released, 5 returned; a retry or failure the task's
--          Timeout caused is "2t" or "3t", recorded as timed out), result (flag byte +
--          bytes, or ""), error, retry delay in ms
--
-- Transition: task U -> S, U -> Y (retry with a delay), U -> R (retry
-- without one, released, returned), U -> F; children P -> R, P -> W or
-- P -> K; under strategy stop, every unfinished task -> C and the run
-- U -> F; run U -> S or U -> F when its last task ends.
--
-- Returns 2n values: per outcome a code (OK applied, NOT_FOUND, STALE
-- epoch, CORRUPT record, ILLEGAL a refused move) and the run's
-- status letter after it ('' when the run is gone). Pushes one wake-up
-- token per task made ready or delayed, to its queue's wake list.
--
-- Dead letters (fail_task): a task failed for good is RPUSHed to x:<run>
-- and ZADDed to the shard's index dl.
-- Limits (lib_limit.lua): a task leaving running gives back its slots
-- (SREM from l:<key>) and each slot freed puts the oldest live task waiting
-- on the key back at the head of its ready list (LPOP of lw:<key>, LPUSH,
-- HDEL of g:<task>, a wake-up token). A released or returned task that
-- held a slot keeps its place (limit_keep): it goes to the head of its
-- ready list itself and wakes no task waiting on its keys.
-- Events: one per status move above, written last (flush_events,
-- lib_buffers.lua): one XADD of them all to <base>e (MAXLEN ~ cap); with
-- WithStats, HINCRBY of <base>st and LPUSH and LTRIM of <base>sd:<task> for
-- an attempt that ended, and HINCRBY of the minute's field in
-- <base>sm:<hour>:<counter> per counter moved (tasks succeeded, failed,
-- retried; runs completed, failed), with a PEXPIRE of 25 h when it made the
-- field (flush_series); one PUBLISH to <prefix>:ev, naming the runs the
-- call ended for their RunWait callers (lib_run.lua). An outcome refused
-- (stale epoch) moves nothing and makes no event.
--
-- Queue registry: a push that makes a queue's ready list or delayed set
-- go from empty to non-empty adds the queue to the shard's registry qn
-- (SADD, register_queue in lib_buffers.lua; QueueList reads it). A resend
-- adds it again to no effect; Redis full refuses it with the script's
-- other writes, as below; a registry Redis lost is written again by the
-- next such push, and lists nothing meanwhile.
-- Retried: every outcome the first call applied finds the epoch moved on
-- and answers STALE (stale epoch), changing nothing: no dead letter, slot
-- release, event or count (of <base>st or a minute) is written twice. Each applied outcome writes its
-- attempt record once, into field a:<task>:<epoch> of its own (never
-- rewritten), so a retry cannot append a record twice; one that ends a
-- task of a version 8 run folds it into the state it writes (lib_codec.lua),
-- which the retry's STALE leaves as it is.
-- Lost data: an outcome whose run hash Redis lost answers NOT_FOUND and
-- writes nothing (the worker takes its lease as lost); a lease entry lost
-- from the lease zset does not stop a finish (its ZREM finds nothing). A
-- lost dl forgets letters from the global list; x:<run> and the task's
-- status still name them. A lost <base>sm:<hour>:<counter> reads as zeros
-- for its minutes; the next count of its hour starts it again. A lost l:<key> forgets holders, so the key admits
-- more than its limit until they end (their SREM then finds nothing); a
-- lost lw:<key> forgets who waited, and those tasks stay ready but out of
-- every list until their run is cancelled (the store cannot find them again
-- without a scan).
-- Out of memory: the function is declared allow-oom and runs whole, so
-- in-flight work keeps completing: it adds only the records of attempts
-- already leased (results are bounded by WithMaxResultBytes), the dead
-- letters of the tasks it fails and its events (and, with WithStats, its
-- minute's counts: one small field per counter and minute), and frees leases, payloads
-- and limit slots (the waiter moved back costs one list entry it already
-- had). The streams are trimmed as they grow, so they stay within their
-- caps. On the EVALSHA path the first write is the removal of a lease
-- entry, which Redis allows, and the call then runs whole; only when the
-- first outcome applied is a retry with a delay or a failure does a write
-- that needs memory come first (its delayed or dead-letter entry), and
-- Redis refuses the call before it has written anything.
-- Cut off: a worker cut off cannot finish: its handlers are cancelled with
-- ErrLeaseLost by its own timer before their leases can expire in Redis,
-- the sweep requeues the tasks under a new epoch, and a finish that gets
-- through afterwards answers STALE and changes nothing. The call itself is
-- atomic: an unanswered call applied its batch whole or not at all, and a
-- resend tells which (Retried).

local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
local n = tonumber(ARGV[4])
local rks = {}
for i = 1, n do rks[i] = KEYS[1 + i] end
local out = {}
finish_batch(ctx, KEYS[1], rks, ARGV, 5, n, out)
flush()
wake(ctx)
return out
