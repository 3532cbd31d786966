-- run_count.lua: count, per status, the runs of one index of one shard
-- that pass a filter, from a cursor, reading at most a budget of entries:
-- one step of a count, which RunCount repeats from the answered position
-- until the index is over or its read bound is spent, so that no call
-- holds Redis for long. It writes nothing. RunCount sends it only for a
-- filter its indexes cannot count alone (ZCOUNT answers the others).
--
-- KEYS[1..n]  one index to read, as run_list.lua reads it, or
--             alternatives of which the smaller is read (ARGV[6]); of the
--             alternative read, this call reads the first key (RunCount
--             reads the others after it)
-- ARGV[1]  shard base "<prefix>:{s}:" (run hashes, for the checks)
-- ARGV[2]  max score as ZREVRANGEBYSCORE takes it ("+inf", "(<ms>", or
--          "<ms>", the score of the position to go on from)
-- ARGV[3]  member of the position to go on from, or "": entries scored
--          ARGV[2] whose member is >= it were counted already
-- ARGV[4]  min score ("0" or "<ms>")
-- ARGV[5]  budget: the most entries read, a run whose errors are read
--          counting its tasks too; 0 only asks whether an entry is left
-- ARGV[6]  the keys per alternative when KEYS are alternatives and only
--          the smallest is read, else ""
-- ARGV[7..13]  the checks made run by run (lib_query.lua)
-- ARGV[14] the form of each key, as run_list.lua's ARGV[15]
--
-- Transition: none; it writes nothing.
--
-- Returns {more, last score, last member, read, P, U, S, F, C, best}:
-- more is 1 when the budget ran out with entries left, the position of
-- the last entry read (to go on from), the budget used, the count of
-- matching runs per status letter, and the position in KEYS (from 1) of
-- the first key of the alternative read.
--
-- Retried: it writes nothing, so a retry counts again, the index as it
-- stands then.
-- Lost data: a run whose hash is gone (expired, lost, not yet pruned) is
-- not counted; an index Redis lost counts nothing.
-- Out of memory: declared no-writes, so Redis runs it at maxmemory, and
-- on replicas.
-- Cut off: the caller gets an error and nothing has changed; it counts
-- again.

local base, max, cid, min, budget = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local f = query_filter(ARGV, 7)
local keys, kinds, best = query_keys(KEYS, ARGV[6], ARGV[14] or '')
local counts = {P = 0, U = 0, S = 0, F = 0, C = 0}
local read, more, last_s, last_m = 0, 0, '', ''
query_walk(keys[1], string.sub(kinds, 1, 1), max, cid, min, 250, function(m, sc)
  if read >= budget then
    -- an entry is left past the budget
    more = 1
    return false
  end
  last_m, last_s = m, sc
  local ok, st, cost = query_match(f, base, m)
  read = read + cost
  if ok and counts[st] then counts[st] = counts[st] + 1 end
  return true
end)
return {more, last_s, last_m, read, counts.P, counts.U, counts.S, counts.F, counts.C, best}
