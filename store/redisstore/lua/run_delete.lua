-- run_delete.lua: delete a finished run with everything it owns.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua) (unused
--          but for the common argument order)
-- ARGV[2]  shard base "<prefix>:{s}:" (dead letters, key index, query
--          indexes of the run's shard)
-- ARGV[3]  run id
--
-- Transition: none; a finished run (S, F or C) leaves the store: see
-- delete_run and forget_run (lib_delete.lua) for every key and entry it removes, and the
-- copy of its attempt records kept past it, h:<run> (keep_history). A run
-- that has not finished is refused and left as it is.
--
-- Returns {OK} deleted, {NOT_FOUND}, {CORRUPT} unreadable meta, {ACTIVE}
-- the run has not finished (plait.ErrRunActive).
--
-- Retried: the run is gone, so the retry answers {NOT_FOUND} and
-- changes nothing; the Go side does not retry on its own.
-- Lost data: a run Redis lost answers {NOT_FOUND}; index entries whose run was
-- lost stay until the expiry entry of the run (if it had ended) is pruned;
-- a name stream entry of runs Redis lost goes with the last of them.
-- Out of memory: the function is declared allow-oom: it only deletes, and
-- deleting is how memory comes back. On the EVALSHA path too, DEL, ZREM
-- and XDEL need no memory.
-- Cut off: the script is atomic; a worker cut off mid-call either deleted
-- the run or did not, and a retry tells which.

local ctx = new_ctx(ARGV[2], ARGV[1])
return {delete_run(ctx, KEYS[1], ARGV[3])}
