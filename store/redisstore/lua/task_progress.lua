-- task_progress.lua: store progress reports of running attempts, each
-- with its event (TaskProgress).
--
-- KEYS[i]  <prefix>:{s}:r:<run i>   run hash of the i-th report
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (the event stream)
-- ARGV[3]  number of reports n
-- ARGV[4+5(i-1) ..]  per report: run id, task, epoch, value (a Go float in
--          decimal, stored as sent), note
--
-- Run hash fields (read back by codec_run.go, decodeProgress):
--   pg:<task>          the task's latest report:
--                      "epoch,attempt,atMs,value;" .. note
--   pg:<task>:<epoch>  the last report of an earlier attempt of the task,
--                      moved here from pg:<task> when a later attempt
--                      reports or a replay resets the task (run_replay.lua)
--
-- Transition: none; the task stays U. Reads the task's state s:<task>
-- (HGET) and its latest report; writes pg:<task> (and at a new attempt's
-- first report pg:<task>:<old epoch>) and one event per report stored,
-- "%<task>,<attempt>,<epoch>,<value>,<note length>[,<generation>];" .. note .. worker
-- (the generation only above 0)
-- (events.go decodeEvent), written last (flush_events).
--
-- Returns {n codes: OK stored, NOT_FOUND no run or task, STALE the task is
-- not running under the report's epoch (nothing written), CORRUPT corrupt
-- record}.
--
-- Retried: a resend stores the same report again: the value and note do
-- not change, its time moves to the resend's and its event is recorded a
-- second time. Reports only ever replace the task's latest one, so nothing
-- grows but the capped event stream.
-- Lost data: a report whose run hash Redis lost answers NOT_FOUND and
-- writes nothing; a lost report is simply not shown until the attempt's
-- next one.
-- Out of memory: declared without allow-oom: a full Redis refuses the call
-- up front, before any write; the Scheduler drops the reports (the
-- attempt itself is not affected) and sends the attempt's next one at its
-- next flush. On the EVALSHA path the first write is the HSET of the
-- first report stored, which Redis refuses alone.
-- Cut off: a worker cut off past its lease finds the epoch bumped by the
-- sweep, so the reports it sends late answer STALE and are never shown as
-- the next attempt's.

-- Each report reads the task's state and its last report with one HMGET
-- and checks the state in its scanned form (state_scan: no number
-- conversion), its epoch compared as the digits both sides write.

local ctx = new_ctx(ARGV[2], ARGV[1])
local n = tonumber(ARGV[3])
local out = {}
for i = 1, n do
  local a = 4 + 5 * (i - 1)
  local rk, id, name, epoch, value, text = KEYS[i], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local code = OK
  local f = 'pg:' .. name
  local v = redis.call('HMGET', rk, 's:' .. name, f)
  local s, prev = v[1], v[2]
  if not s then code = NOT_FOUND else
    local t = state_scan(s, scan_t)
    if not t then code = CORRUPT
    elseif t.st ~= 'U' or t.epoch ~= epoch then code = STALE
    else
      if prev then
        local pe = string.match(prev, '^(%d+),')
        if pe and pe ~= epoch then redis.call('HSET', rk, f .. ':' .. pe, prev) end
      end
      redis.call('HSET', rk, f, epoch .. ',' .. t.attempt .. ',' .. ctx.nows .. ',' .. value .. ';' .. text)
      -- The generation of a task a replay reset is in its state, after
      -- the status letter (none for 0): the event carries it after the
      -- note's length, only above 0, as every other event does.
      local gen = ''
      if t.gen and t.gen ~= '' then gen = ',' .. t.gen end
      note(ctx, id, '%' .. name .. ',' .. t.attempt .. ',' .. epoch .. ',' .. value .. ',' .. itoa(#text) .. gen .. ';' .. text .. t.worker, false)
    end
  end
  out[i] = code
end
flush_events()
return out
