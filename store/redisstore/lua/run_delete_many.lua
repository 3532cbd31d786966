-- run_delete_many.lua: delete finished runs of one shard, each with
-- everything it owns (RunDeleteMany).
--
-- KEYS[i]  <prefix>:{s}:r:<run i>   run hash of the i-th id
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua) (unused
--          but for the common argument order)
-- ARGV[2]  shard base "<prefix>:{s}:" (dead letters, key index, query
--          indexes of the shard)
-- ARGV[2+i] run id i
--
-- Transition: none; each finished run (S, F or C) leaves the store as
-- run_delete.lua deletes one (delete_run, lib_delete.lua); a run that has
-- not finished is left as it is. Runs are taken in the order given, each
-- on its own: a run named twice is deleted by the first and not found by
-- the second.
--
-- Returns one code per id, in order: OK deleted, NOT_FOUND, CORRUPT
-- unreadable meta, ACTIVE the run has not finished (plait.ErrRunActive).
--
-- Retried: the runs deleted are gone, so the resend answers NOT_FOUND for
-- them and ACTIVE again for the others, changing nothing; the Go side
-- does not retry on its own.
-- Lost data: a run Redis lost answers NOT_FOUND; index entries whose run
-- was lost stay until the expiry entry of the run (if it had ended) is
-- pruned; a name stream entry of runs Redis lost goes with the last of
-- them.
-- Out of memory: the function is declared allow-oom: it only deletes, and
-- deleting is how memory comes back. On the EVALSHA path too, DEL, ZREM
-- and XDEL need no memory.
-- Cut off: the script is atomic; a caller cut off mid-call deleted the
-- shard's runs or none, and a resend tells which (NOT_FOUND).

local ctx = new_ctx(ARGV[2], ARGV[1])
local out = {}
for i, rk in ipairs(KEYS) do
  out[i] = delete_run(ctx, rk, ARGV[2 + i])
end
return out
