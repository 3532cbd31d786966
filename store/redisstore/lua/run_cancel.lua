-- run_cancel.lua: cancel every unfinished task of a run and the run itself
-- (stop_run in lib_cancel.lua).
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (lease zset, payload keys, events channel, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  run id
-- ARGV[5]  reason, recorded as the error of every task the cancel stops
--
-- Transition: every unfinished task (P, W, R, U, Y) -> C; run P -> C or
-- U -> C. A terminal run is left as it is.
--
-- Returns {code, then the run hash as HGETALL gives it}: code OK
-- cancelled or already terminal (unchanged), NOT_FOUND, CORRUPT (corrupt
-- record), ILLEGAL a refused move (nothing written); no fields follow a
-- code other than OK. Ready and delayed entries of the cancelled tasks stay in
-- their queues and are dropped by the next claim (lazy deletion).
--
-- Limits (lib_limit.lua): a task leaving running gives back its slots
-- (SREM from l:<key>) and each slot freed puts the oldest live task waiting
-- on the key back at the head of its ready list (LPOP of lw:<key>, LPUSH,
-- HDEL of g:<task>, a wake-up token).
-- Events: one per task cancelled and run_cancelled, written last
-- (flush_events); a cancel of a finished run moves nothing and makes none.
-- Keys: every key the run owns starts the run's retention when the cancel
-- ends it (run_ended, lib_run.lua): the hash, its log lines tl:, its
-- idempotency key k:, the payload kept apart p:<run>:<task> of every task
-- that did not succeed (the tasks it cancels, pending, ready, delayed,
-- retrying or running, among them), and its dead-letter list x: when it
-- has one, an hour longer, for the pruner to take its letters out of dl.
--
-- Retried: the run is terminal by then: the retry answers OK and the run's
-- fields, changing nothing; no slot is given back twice (the retry moves
-- no task, and an SREM of a slot already given back frees nothing).
-- Lost data: a run whose hash Redis lost answers NOT_FOUND and nothing is
-- written; lease entries of its tasks that survived are dropped by the
-- sweep, once they expire, as records missing, and its payload keys that
-- survived keep no TTL (the cancel cannot name them without the hash). A
-- lost payload key changes nothing here: its PEXPIRE finds no key. A lost
-- l:<key> forgets holders, so the key admits more than its limit until
-- they end (their SREM then finds nothing); a lost lw:<key> forgets who
-- waited, and those tasks stay ready but out of every list until their run
-- is cancelled (the store cannot find them again without a scan).
-- Out of memory: the function is declared allow-oom and runs whole: a
-- cancel ends work and frees leases; the releases shrink memory, and the
-- waiter moved back costs one list entry it already had. Its events are
-- written last, under allow-oom like the rest: a full Redis still applies
-- the step, and its events with it; the streams are trimmed as they grow,
-- so they stay within their caps. On the EVALSHA path the run hash is
-- written first (one HSET), before the lease entries are removed, so Redis
-- refuses the cancel at that write and nothing changes.
-- Cut off: the call is atomic, releases and events included: a caller cut
-- off mid-call cancelled the run whole or not at all, and sending the
-- cancel again (Retried) answers the run as it stands. Workers running its
-- tasks see their next extend or finish answer STALE (the cancel moved
-- the epoch on) and stop the attempt.

local ctx = new_ctx(ARGV[2], ARGV[1], ARGV[3])
local rk = KEYS[1]
local r = meta_get(rk)
if r == nil then return {NOT_FOUND} end
if r == false then return {CORRUPT} end
if not run_terminal(r) and not stop_run(ctx, rk, ARGV[4], r, 'C', ARGV[5]) then return {ILLEGAL} end
flush()
wake(ctx)
local out = {OK}
for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
return out
