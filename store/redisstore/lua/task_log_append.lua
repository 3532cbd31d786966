-- task_log_append.lua: store lines one attempt of a task logged, under the
-- task's cap (TaskLogAppend).
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash (the task's epoch; field tl set
--                                 to 1 by the append that makes the log hash)
-- KEYS[2]  <prefix>:{s}:tl:<run>  log hash of the run
-- ARGV[1]  task name
-- ARGV[2]  epoch of the attempt
-- ARGV[3]  attempt number
-- ARGV[4]  sequence number of this append within the attempt, from 1
-- ARGV[5]  the most lines kept per task
-- ARGV[6]  the most bytes of text kept per task
-- ARGV[7..] the lines, oldest first, each "timeMs,level,textLen;" .. text
--
-- Log hash fields (lib_codec.lua's encodings do not apply here):
--   n:<task>                  "lines,bytes,dropped": the task's totals, all attempts
--   b:<task>:<epoch>:<seq>    one append: "attempt,stored,dropped;" then the
--                             stored lines as sent, one after another
--
-- Transition: none; no status changes.
--
-- Returns {code, stored, dropped}: code OK applied, NOT_FOUND run or task
-- not found, STALE epoch (the task's epoch is not the attempt's: nothing
-- stored), CORRUPT record. A line is kept while the task is under both
-- caps; the first line that does not fit and every line after it are
-- dropped.
--
-- Retried: a lost reply resent with the same epoch and sequence number
-- finds b:<task>:<epoch>:<seq> there, and its header is answered again; no
-- line is stored twice and the totals do not move.
-- Lost data: a lost run hash answers NOT_FOUND and stores nothing; a log
-- hash lost without its run starts the task's totals again (its cap
-- counts from zero), and a resend of an append whose field was lost
-- stores it once.
-- Out of memory: declared without allow-oom, so Redis refuses the call
-- before any write: nothing is stored and the caller counts the lines as
-- lost (the Scheduler says so once per attempt on its logger); the attempt
-- itself is not affected.
-- Cut off: a worker cut off past its lease finds the epoch bumped by the
-- sweep, so the lines it sends late answer STALE and are never mixed into
-- the next attempt's.
--
-- Expiry: while the run is active the log hash has no TTL; the run's end
-- (run_ended) gives it the run's retention, and an append after the end
-- copies the run hash's remaining TTL. A delete or a prune of the run
-- deletes it with the run (forget_run).

local rk, lk = KEYS[1], KEYS[2]
-- The state is checked in its scanned form (state_scan: no number
-- conversion), the epoch compared as the digits both sides write.
local name, epoch, seq = ARGV[1], ARGV[2], ARGV[4]
local s = redis.call('HGET', rk, 's:' .. name)
if not s then return {NOT_FOUND, 0, 0} end
local t = state_scan(s, scan_t)
if not t then return {CORRUPT, 0, 0} end
if t.epoch ~= epoch then return {STALE, 0, 0} end

local bf = 'b:' .. name .. ':' .. epoch .. ':' .. seq
local prev = redis.call('HGET', lk, bf)
if prev then
  local st, dr = string.match(prev, '^%d+,(%d+),(%d+);')
  if not st then return {CORRUPT, 0, 0} end
  return {OK, tonumber(st), tonumber(dr)}
end

local nf = 'n:' .. name
local lines, bytes, dropped = 0, 0, 0
local totals = redis.call('HGET', lk, nf)
-- the run's mark that it has a log hash, read by run_ended: written with
-- the task's first append (an HSETNX of a field already there writes
-- nothing)
if not totals then redis.call('HSETNX', rk, 'tl', '1') end
if totals then
  local l, b, d = string.match(totals, '^(%d+),(%d+),(%d+)$')
  if not l then return {CORRUPT, 0, 0} end
  lines, bytes, dropped = tonumber(l), tonumber(b), tonumber(d)
end
local max_lines, max_bytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local kept, stored, drop = {}, 0, 0
for i = 7, #ARGV do
  local v = ARGV[i]
  local len = tonumber(string.match(v, '^%-?%d+,%-?%d+,(%d+);'))
  if not len then return {CORRUPT, 0, 0} end
  if drop > 0 or lines >= max_lines or bytes + len > max_bytes then
    drop = drop + 1
  else
    kept[#kept + 1] = v
    lines, bytes, stored = lines + 1, bytes + len, stored + 1
  end
end
redis.call('HSET', lk, bf, ARGV[3] .. ',' .. stored .. ',' .. drop .. ';' .. table.concat(kept),
  nf, lines .. ',' .. bytes .. ',' .. (dropped + drop))
local ttl = redis.call('PTTL', rk)
if ttl > 0 then redis.call('PEXPIRE', lk, ttl) end
return {OK, stored, drop}
