-- run_create_part.lua: write one part of the fields of a large run before
-- run_create.lua commits it. Until the commit the hash has no field m, so
-- every other script and RunGet see no run; an uncommitted part expires.
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash being built
-- ARGV[1]  time to live of the uncommitted hash in ms
-- ARGV[2..]  field/value pairs (d:<task>, s:<task>, u:<task>, c:<task> ...)
--
-- Transition: none; the tasks' states are written as the Go side encoded
-- them (P), and the commit makes the moves.
--
-- Returns 0.
--
-- Retried: before the commit it writes the same fields again and restarts
-- the time to live; after the commit it writes nothing.
-- Lost data: a part Redis lost before the commit leaves the hash short of
-- fields: the commit counts them (run_create.lua's ARGV[6]), answers
-- CORRUPT and deletes what is left, and the create fails with no run
-- written.
-- Out of memory: parts are sent as EVALSHA in a pipeline, and the first
-- write is the HSET, which Redis refuses: nothing of this part is written;
-- parts written before it expire.
-- Cut off: the parts and the commit go in one pipeline: a caller cut off
-- before the commit ran leaves parts that expire with their time to live,
-- and no run; cut off after it, the run exists, and a resend of the
-- pipeline writes no part again (the hash has field m) and answers the
-- run.

local rk = KEYS[1]
if redis.call('HEXISTS', rk, 'm') == 1 then return 0 end
local i = 2
local last = #ARGV
while i <= last do
  local j = math.min(i + 999, last)
  local args = {}
  for a = i, j do args[#args + 1] = ARGV[a] end
  redis.call('HSET', rk, unpack(args))
  i = j + 1
end
redis.call('PEXPIRE', rk, tonumber(ARGV[1]))
return 0
