-- run_list.lua: read one page of run ids from the query indexes of one
-- shard, newest first. It writes nothing.
--
-- KEYS[1..n]  the index zsets of the shard to read (score created ms,
--             member run id): one service, tenant or workflow index, the
--             index of all runs ia, or the status indexes it:<letter> of
--             the statuses asked (U, S, F, C)
-- ARGV[1]  shard base "<prefix>:{s}:" (run hashes, for the status filter)
-- ARGV[2]  max score, as ZREVRANGEBYSCORE takes it: "+inf", "(<ms>" (the
--          end of a time range, exclusive) or "<ms>" (a cursor's score)
-- ARGV[3]  cursor run id, or "": with it, entries scored ARGV[2] whose
--          member is >= it were on earlier pages and are skipped (found by
--          a binary search of their offset)
-- ARGV[4]  min score: "-inf" or "<ms>" (the start of a time range)
-- ARGV[5]  want: how many entries to answer per key (page size + 1)
-- ARGV[6]  status letters a run must be in ("" for any): read from each
--          run's meta, for a service, tenant or workflow index, or ia when
--          pending runs are asked for
-- ARGV[7]  budget: the most entries read per key
--
-- Transition: none; it writes nothing.
--
-- Returns, per key in order: cut (1 when the budget ran out before want
-- entries were found and the index was not over), the score and member of
-- the last entry read ("" when none), the count c of entries found, then c
-- pairs member, score.
--
-- Retried: it writes nothing, so a retry reads again, the indexes as they
-- stand then.
-- Lost data: a run whose hash is gone (expired, lost, not yet pruned)
-- fails a status filter and is left out, and RunList skips it when it
-- reads the page; an index Redis lost lists nothing.
-- Out of memory: declared no-writes, so Redis runs it at maxmemory, and
-- on replicas.
-- Cut off: the caller gets an error and nothing has changed; it reads the
-- page again.

local base, max, cid, min = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local want, filter, budget = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local cs = nil
if cid ~= '' then cs = tonumber(max) end
local chunk = want
if filter ~= '' then chunk = math.max(want * 4, 64) end
local out = {}
for _, k in ipairs(KEYS) do
  local got, read, off, cut, last_s, last_m = {}, 0, 0, 0, '', ''
  if cs then
    -- Entries scored like the cursor sort by member, descending: skip those
    -- at or above the cursor's by a binary search of their offset, so a
    -- page after many runs of one millisecond costs a few reads, not one
    -- per run skipped.
    local hi = redis.call('ZCOUNT', k, max, max)
    while off < hi do
      local mid = math.floor((off + hi) / 2)
      local e = redis.call('ZREVRANGEBYSCORE', k, max, max, 'LIMIT', mid, 1)[1]
      if e and e >= cid then off = mid + 1 else hi = mid end
    end
  end
  while #got < 2 * want do
    local n = math.min(chunk, budget - read)
    if n <= 0 then
      cut = 1
      break
    end
    local es = redis.call('ZREVRANGEBYSCORE', k, max, min, 'WITHSCORES', 'LIMIT', off, n)
    local count = #es / 2
    for j = 1, #es, 2 do
      local m, sc = es[j], es[j + 1]
      read = read + 1
      last_m, last_s = m, sc
      local ok = true
      if filter ~= '' then
        local meta = redis.call('HGET', key(base, 'r', m), 'm')
        ok = meta and string.find(filter, string.sub(meta, 1, 1), 1, true) ~= nil
      end
      if ok then
        got[#got + 1] = m
        got[#got + 1] = sc
        if #got >= 2 * want then break end
      end
    end
    off = off + count
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
