-- dead_letter_purge.lua: remove named dead letters from the shard's
-- dead-letter index and their runs' dead-letter lists (DeadLetterPurge).
--
-- KEYS[1]  <prefix>:{s}:dl        dead-letter index of the shard
-- ARGV[1]  shard base "<prefix>:{s}:" (the runs' lists x:<run>)
-- ARGV[2..] pairs: run id, task name
--
-- Transition: none; the tasks keep their status, error and records.
--
-- Returns the number of letters removed from the index. A letter is
-- removed by its exact member "<run> <task>" (ZREM) and its task name from
-- that run's list (LREM), so no other letter, of this run or another, is
-- touched.
--
-- Retried: the letters the first call removed are gone; the retry removes
-- nothing more and answers 0 for them (the effect is the same, the count
-- is the first call's to report).
-- Lost data: a letter whose index entry was lost is no longer listed and
-- purging it removes nothing; its task keeps its status in the run.
-- Out of memory: declared allow-oom; it only removes.
-- Cut off: no lease is involved: the call is atomic, so a caller cut off
-- mid-call purged every letter it named or none, and sending it again
-- removes what is left (Retried).

local dl, base = KEYS[1], ARGV[1]
local n = 0
for i = 2, #ARGV, 2 do
  local id, name = ARGV[i], ARGV[i + 1]
  if redis.call('ZREM', dl, entry(id, name)) == 1 then
    n = n + 1
    redis.call('LREM', key(base, 'x', id), 0, name)
  end
end
return n
