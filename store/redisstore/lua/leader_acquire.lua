-- leader_acquire.lua: take the leader lease when it is free or expired, or
-- renew it for its holder.
--
-- KEYS[1]  <prefix>:{sched}:leader  leader lease hash: holder, epoch, until
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  holder
-- ARGV[3]  epoch held, "0" to acquire
-- ARGV[4]  TTL in ms
--
-- Transition: free or expired (until <= now): holder set, epoch + 1, until
-- = now + TTL. Held by ARGV[2]: until = now + TTL, epoch kept (holder names
-- carry a per-process nonce, so only the holder itself can name it; ARGV[3]
-- is what it believes it holds). Held by another: nothing. The hash is
-- never deleted, so epochs only grow.
--
-- Returns {acquired 1 or 0, holder, epoch, until ms} of the lease as it
-- stands.
--
-- Retried: a retried acquire that took the lease finds it held by the same
-- holder and renews it, answering the epoch the lost reply carried. A
-- retried renewal renews again.
-- Lost data: a lost lease hash reads as free, so the next acquire takes it
-- with epoch 1: epochs start over. The holder before the loss is fenced
-- all the same: the hash no longer holds its epoch, so its fires answer
-- STALE until its own next acquire takes the lease anew.
-- Out of memory: the function is declared allow-oom and runs whole: a
-- full Redis must not depose a leader whose fires free memory no less than
-- before. On the EVALSHA path Redis refuses the HSET and nothing changes.
-- Cut off: a holder cut off cannot renew: its lease runs out TTL after its
-- last renewal, the next acquire by another process takes it with the
-- next epoch, and the old holder's late fires answer STALE.

local now = now_ms(ARGV[1])
local holder = redis.call('HGET', KEYS[1], 'holder') or ''
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local until_ms = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local ttl = tonumber(ARGV[4])
if until_ms <= now then
  epoch = epoch + 1
  holder = ARGV[2]
elseif holder ~= ARGV[2] then
  return {0, holder, int(epoch), int(until_ms)}
end
until_ms = now + ttl
redis.call('HSET', KEYS[1], 'holder', holder, 'epoch', int(epoch), 'until', int(until_ms))
return {1, holder, int(epoch), int(until_ms)}
