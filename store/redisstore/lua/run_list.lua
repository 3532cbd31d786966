-- run_list.lua: read one page of run ids from the query indexes of one
-- shard, newest first. It writes nothing.
--
-- KEYS[1..n]  the index zsets of the shard to read (member run id): one
--             service, tenant, service-and-tenant or workflow index, the
--             index of all runs ia, or the status indexes it:<letter> of
--             the statuses asked (U, S, F, C), all scored by creation ms;
--             or the end indexes if:<letter> (S, F, C), scored by end ms
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
-- ARGV[7]  "1" when KEYS are alternatives and only the smallest is read
--          (a workflow with a service or a tenant), else ""
-- ARGV[8..14]  the checks made run by run (lib_query.lua): status
--          letters, workflow, service, tenant, creation bounds, error
--          prefix
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
local cs = nil
if cid ~= '' then cs = tonumber(max) end
local chunk = want
if checks then chunk = math.max(want * 4, 64) end
local out = {}
for _, k in ipairs(query_keys(KEYS, ARGV[7])) do
  local got, read, off, cut, last_s, last_m = {}, 0, 0, 0, '', ''
  -- skip the entries of the cursor's score on earlier pages
  if cs then off = query_skip(k, max, cid) end
  while #got < 2 * want do
    local n = math.min(chunk, budget - read)
    if n <= 0 then
      cut = 1
      break
    end
    local es = redis.call('ZREVRANGEBYSCORE', k, max, min, 'WITHSCORES', 'LIMIT', off, n)
    local count, used = #es / 2, 0
    for j = 1, #es, 2 do
      local m, sc = es[j], es[j + 1]
      used = used + 1
      last_m, last_s = m, sc
      local ok, st, cost = true, nil, 1
      if checks then ok, st, cost = query_match(f, base, m) end
      read = read + cost
      if ok then
        got[#got + 1] = m
        got[#got + 1] = sc
        if #got >= 2 * want then break end
      end
      if read >= budget then break end
    end
    off = off + used
    if #got >= 2 * want then break end
    if used < count or read >= budget then
      cut = 1
      break
    end
    if count < n then break end
  end
  if #got >= 2 * want then cut = 0 end
  out[#out + 1] = cut
  out[#out + 1] = last_s
  out[#out + 1] = last_m
  out[#out + 1] = #got / 2
  for _, v in ipairs(got) do out[#out + 1] = v end
end
return out
