-- next_id.lua: take the next run id from the sequence, landing on a shard.
--
-- KEYS[1]  <prefix>:{seq}   run id sequence (string)
-- ARGV[1]  number of shards n
-- ARGV[2]  wanted shard (0 .. n-1), or -1 for whichever the sequence gives
--
-- Returns the id: the smallest sequence value after the current one whose
-- remainder mod n is the wanted shard (ids skipped on the way stay unused).

local n = tonumber(ARGV[1])
local want = tonumber(ARGV[2])
local id = redis.call('INCR', KEYS[1])
if want >= 0 and n > 1 then
  local skip = (want - id % n) % n
  if skip > 0 then id = redis.call('INCRBY', KEYS[1], skip) end
end
return id
