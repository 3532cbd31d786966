-- admission_set.lua: set or remove one cap on pending tasks in one shard
-- (AdmissionSet sends one call per shard).
--
-- KEYS[1]  <prefix>:{s}:ac  caps of the shard (hash, lib_admission.lua)
-- ARGV[1]  field: "q:<queue>" or "t:<tenant>"
-- ARGV[2]  the cap, 1 or more, or 0 to remove it
--
-- Transition: HSET (or HDEL for 0) of the field; no count changes. The
-- runs counted against a cap stay counted until their tasks end, so a cap
-- removed and set again finds their tasks counted.
--
-- Returns {OK}.
--
-- Retried: the second call sets the same value again, or deletes a field
-- gone: nothing changes.
-- Lost data: a cap lost with its shard is gone until set again; the
-- shard's creates are admitted without it meanwhile, and counted against
-- none. A failover to a replica that lagged may bring back the cap before
-- the last set.
-- Out of memory: allow-oom: capping a tenant is how an operator stops one
-- filling Redis, so it must go through when Redis is full; one hash field.
-- Cut off: a caller cut off between the calls to the shards leaves some
-- with the new cap and some with the old; AdmissionGet answers the largest,
-- and a new AdmissionSet writes them all again.

if ARGV[2] == '0' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return {OK}
