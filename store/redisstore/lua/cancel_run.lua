-- cancel_run.lua: cancel every unfinished task of a run and the run itself
-- (stop_run in lib_cancel.lua).
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (lease zset, payload keys, run channel, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  run id
-- ARGV[5]  reason, recorded as the error of every task the cancel stops
--
-- Transition: every unfinished task (P, W, R, U, Y) -> C; run P -> C or
-- U -> C. A terminal run is left as it is.
--
-- Returns {code, then the run hash as HGETALL gives it}: code 0 cancelled
-- or already terminal (unchanged), 1 not found, 4 corrupt record,
-- code_illegal a refused move (nothing written); no fields follow a
-- non-zero code. Ready and delayed entries of the cancelled tasks stay in
-- their queues and are dropped by the next claim (lazy deletion).
--
-- Retried: the run is terminal by then: the retry answers 0 and the run's
-- fields, changing nothing.
-- Out of memory: the function is declared allow-oom and runs whole: a
-- cancel ends work and frees leases. On the EVALSHA path the run hash is
-- written first (one HSET), before the lease entries are removed, so Redis
-- refuses the cancel at that write and nothing changes.

local ctx = new_ctx(ARGV[2], now_ms(ARGV[1]), tonumber(ARGV[3]))
local rk = KEYS[1]
local r = meta_get(rk)
if r == nil then return {1} end
if r == false then return {4} end
if not run_terminal(r) and not stop_run(ctx, rk, ARGV[4], r, 'C', ARGV[5]) then return {code_illegal} end
flush()
wake(ctx)
local out = {0}
for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
return out
