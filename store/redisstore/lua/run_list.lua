-- run_list.lua: read one page of run ids from the query indexes of one
-- shard, newest first. It writes nothing.
--
-- KEYS[1..n]  the indexes of the shard to read (member run id): one
--             service, tenant, service-and-tenant or workflow index (its
--             zset and its stream, two keys: lib_names.lua), the index of
--             all runs ia, or the status indexes it:<letter> of the
--             statuses asked (U, S, F, C), all ordered by creation ms; or
--             the end indexes if:<letter> (S, F, C), scored by end ms
-- ARGV[1]  shard base "<prefix>:{s}:" (run hashes, for the checks)
-- ARGV[2]  max score, as ZREVRANGEBYSCORE takes it: "+inf", "(<ms>" (the
--          end of a time range, exclusive) or "<ms>" (a cursor's score)
-- ARGV[3]  cursor run id, or "": with it, entries scored ARGV[2] whose
--          member is >= it were on earlier pages and are skipped (found by
--          a binary search of their offset)
-- ARGV[4]  min score: "0" or "<ms>" (the start of a time range)
-- ARGV[5]  want: how many entries to answer per key (page size + 1)
-- ARGV[6]  budget: the most entries read per key, a run whose errors are
--          read counting its tasks too
-- ARGV[7]  the keys per alternative when KEYS are alternatives of which
--          only the smallest is read (a workflow with a service or a
--          tenant: "2", each a zset and a stream), else ""
-- ARGV[8..14]  the checks made run by run (lib_query.lua): status
--          letters, workflow, service, tenant, creation bounds, error
--          prefix
-- ARGV[15] the form of each key, a letter per key: 'x' a stream, 'z' a
--          zset ("" or missing: all zsets)
--
-- Transition: none; it writes nothing.
--
-- Returns, per key read in order: cut (1 when the budget ran out before
-- want entries were found and the index was not over), the score and
-- member of the last entry read ("" when none), the count c of entries
-- found, then c pairs member, score.
--
-- Retried: it writes nothing, so a retry reads again, the indexes as they
-- stand then.
-- Lost data: a run whose hash is gone (expired, lost, not yet pruned)
-- fails a check and is left out, and RunList skips it when it reads the
-- page; an index Redis lost lists nothing.
-- Out of memory: declared no-writes, so Redis runs it at maxmemory, and
-- on replicas.
-- Cut off: the caller gets an error and nothing has changed; it reads the
-- page again.

local base, max, cid, min = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local want, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local f = query_filter(ARGV, 8)
local checks = f.letters ~= '' or f.names or f.cfrom or f.cto or f.errp ~= ''
local out = {}
local keys, kinds = query_keys(KEYS, ARGV[7], ARGV[15] or '')
for n, k in ipairs(keys) do
  local kind = string.sub(kinds, n, n)
  local chunk = want
  if checks then chunk = math.max(want * 4, 64) end
  local got, read, last_s, last_m = {}, 0, '', ''
  local over = query_walk(k, kind, max, cid, min, chunk, function(m, sc, shared)
    last_m, last_s = m, sc
    local ok, cost = true, 1
    -- a name stream's entry of several runs may name a run deleted since
    -- (lib_names.lua): each run it names is looked up, as a check would
    if checks or shared then
      local _
      ok, _, cost = query_match(f, base, m)
    end
    read = read + cost
    if ok then
      got[#got + 1] = m
      got[#got + 1] = sc
    end
    return #got < 2 * want and read < budget
  end)
  out[#out + 1] = (#got < 2 * want and not over) and 1 or 0
  out[#out + 1] = last_s
  out[#out + 1] = last_m
  out[#out + 1] = #got / 2
  for _, v in ipairs(got) do out[#out + 1] = v end
end
return out
