-- run_count.lua: count the runs of one shard that pass a filter, per
-- status, by reading the index that answers it, at most a budget of
-- entries. It writes nothing. RunCount sends it only for a filter its
-- indexes cannot count alone (ZCOUNT answers the others).
--
-- KEYS[1..n]  the index zsets to read, as run_list.lua reads them
-- ARGV[1]  shard base "<prefix>:{s}:" (run hashes, for the checks)
-- ARGV[2]  max score as ZREVRANGEBYSCORE takes it ("+inf" or "(<ms>")
-- ARGV[3]  min score ("0" or "<ms>")
-- ARGV[4]  budget: the most entries read over all keys, a run whose
--          errors are read counting its tasks too
-- ARGV[5]  "1" when KEYS are alternatives and only the smallest is read
-- ARGV[6..12]  the checks made run by run (lib_query.lua)
--
-- Transition: none; it writes nothing.
--
-- Returns {capped, P, U, S, F, C}: capped is 1 when the budget ran out
-- with entries left, then the count of matching runs per status letter.
--
-- Retried: it writes nothing, so a retry counts again, the indexes as they
-- stand then.
-- Lost data: a run whose hash is gone (expired, lost, not yet pruned) is
-- not counted; an index Redis lost counts nothing.
-- Out of memory: declared no-writes, so Redis runs it at maxmemory, and
-- on replicas.
-- Cut off: the caller gets an error and nothing has changed; it counts
-- again.

local base, max, min, budget = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local f = query_filter(ARGV, 6)
local counts = {P = 0, U = 0, S = 0, F = 0, C = 0}
local read, capped = 0, 0
for _, k in ipairs(query_keys(KEYS, ARGV[5])) do
  local off = 0
  while capped == 0 do
    local n = math.min(1000, budget - read)
    if n <= 0 then
      if #redis.call('ZREVRANGEBYSCORE', k, max, min, 'LIMIT', off, 1) > 0 then capped = 1 end
      break
    end
    local es = redis.call('ZREVRANGEBYSCORE', k, max, min, 'LIMIT', off, n)
    for j = 1, #es do
      local ok, st, cost = query_match(f, base, es[j])
      read = read + cost
      if ok and counts[st] then counts[st] = counts[st] + 1 end
      if read >= budget and j < #es then
        capped = 1
        break
      end
    end
    off = off + #es
    if #es < n then break end
  end
  if capped == 1 then break end
end
return {capped, counts.P, counts.U, counts.S, counts.F, counts.C}
