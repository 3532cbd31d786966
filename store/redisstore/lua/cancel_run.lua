-- cancel_run.lua: cancel every unfinished task of a run and the run itself.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  shard base "<prefix>:{s}:" (lease zset, payload keys, run channel, key index)
-- ARGV[3]  retention of a finished run's keys in ms
-- ARGV[4]  run id
-- ARGV[5]  reason, recorded as the error of every task the cancel stops
--
-- Returns {code, then the run hash as HGETALL gives it}: code 0 cancelled
-- or already terminal (unchanged), 1 not found, 4 corrupt record (no fields
-- follow a non-zero code). Ready and delayed entries of the cancelled tasks stay in
-- their queues and are dropped by the next claim (lazy deletion).

local ctx = new_ctx(ARGV[2], now_ms(ARGV[1]), tonumber(ARGV[3]))
local rk = KEYS[1]
local r = meta_get(rk)
if r == nil then return {1} end
if r == false then return {4} end
if not run_terminal(r) then stop_run(ctx, rk, ARGV[4], r, 'C', ARGV[5]) end
flush()
local out = {0}
for _, v in ipairs(redis.call('HGETALL', rk)) do out[#out + 1] = v end
return out
