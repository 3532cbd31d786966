-- lib_codec.lua: the packed fields of a run hash, parsed and written.
--
-- Encodings (mirrored by codec*.go):
--   run hash field m    "st[gen],total,succ,failed,skipped,cancelled,createdMs,startedOff,endedOff,strategy"
--                        st: P pending U running S completed F failed C cancelled
--                        strategy: c continue, s stop, k skip; offsets are ms after createdMs
--   run hash field o    task names in definition order, separated by ' '
--   run hash field k    idempotency key (only for keyed runs)
--   field s:<task>      "st[gen],attempt,epoch,crashes,resolved,satisfied,firstStartOff,claimOff,endOff,worker"
--                        st: P pending (waiting for deps) W pending (due, in the delayed set)
--                            R ready U running Y retrying S succeeded F failed
--                            K skipped C cancelled D dead
--                        gen: the run's generation (format version 7), in m and in
--                        the states of the tasks a replay reset, written right
--                        after the letter and only when above 0 (a run never
--                        replayed writes "U,", as before): every move packs m or
--                        s: anyway, so each event (lib_status.lua) carries it at
--                        no read. A task's gen is that of the replay that last
--                        reset it, the run's current one whenever it moves.
--   field d:<task>      "queue,prio,runAtMs,delayMs,join,deps,apart\n" .. Go-encoded spec
--                        deps: number of parents; apart: 1 when the payload is
--                        in its own key p:<run>:<task> (deleted when the task ends)
--   field u:<task>      parents "name:cond name:cond" (tasks with dependencies only)
--   field c:<task>      children "name:cond name:cond" (tasks with dependents only)
--   field r:<task>      result: a flag byte (0 raw, 1 deflate) and the bytes
--   field e:<task>      last error text
--   field a:<task>:<ep> the attempt record of the claim of epoch ep (written once, never rewritten):
--                        "attempt,epoch,startOff,durMs,outcome[gen],wlen,elen[,delayMs[,queuedOff]];" .. worker .. error
--                        outcome: s succeeded, r retry, f failed, t timed out (retried or failed),
--                        l released, c crashed, x cancelled; gen as in s: (version 7)
--                        delayMs: the retry delay chosen (0 when none and queuedOff follows)
--                        queuedOff: field w:<task> when the attempt ended (version 6; record_head)
--                        folded (format version 8): the final attempt of a task that succeeded
--                        with no error text, or failed ('f', not timed out), has no record of
--                        its own; the task's state is the record (folded, unfold): attempt,
--                        epoch, claimOff as startOff, endOff - claimOff as durMs, S as s and F
--                        as f, gen and worker from s:, queuedOff from w:<task>, the error from
--                        e:<task> (F; '' for S), delayMs 0. A record is written for every other
--                        end, and for these in a version 7 run. The version is the byte after
--                        d:'s header line, which every finish reads anyway. Nothing rewrites an
--                        ended task's state but a replay, which writes the folded attempt out
--                        as its record first (unfold); history copies of a version 8 run carry
--                        w: and e: (keep_history).
--   field w:<task>      when the task last became ready, or the due time it waits for (set_queued)
--   field a:<task>      attempt records of runs written before per-epoch fields, each as above,
--                        one after another (read only)
--
-- The packed fields are parsed with one string.match each and written with
-- one concatenation: far cheaper in Lua than splitting or string.format. A
-- record table's numbers may be numbers or the digit strings a fast path
-- scanned (an empty string or nil for an unset offset); the packers write
-- both alike, and Lua's arithmetic takes digit strings as numbers. The status letter of either record is set only by task_to and
-- run_to (lib_status.lua); meta_put and state_put write the other fields.

local function meta_parse(m)
  local st, gen, total, succ, failed, skipped, cancelled, created, started, ended, strat = string.match(m,
    '^(%a)(%d*),(%d+),(%d+),(%d+),(%d+),(%d+),(%-?%d+),(%-?%d*),(%-?%d*),(%a)$')
  if not st then return false end
  -- created_s keeps the creation time as written: meta_pack writes it back
  -- as it is, where turning the number into a string again would cost
  -- more than the rest of the pack.
  -- The offsets stay the digit strings they are ('' when unset): they are
  -- written back far more often than they are added to.
  return {st = st, gen = gen, total = tonumber(total), succ = tonumber(succ), failed = tonumber(failed),
    skipped = tonumber(skipped), cancelled = tonumber(cancelled), created = tonumber(created), created_s = created,
    started = started, ended = ended, strat = strat}
end

-- meta_scan and state_scan fill r or t with the fields of a packed record
-- as the strings they are in it, for the fast paths: no number conversion
-- and no new table per record (a fast path reuses one), which the claim
-- and finish loops would otherwise pay per task. The three counts no fast
-- move changes stay packed in mid ("failed,skipped,cancelled" of a run,
-- "crashes,resolved,satisfied" of a task), so a scanned record can make
-- only the fast moves: a task to running or succeeded, a run to running or
-- its end. They return nil when the record is malformed.
--
-- scan_r and scan_t are the tables the fast paths scan into (a Lua table
-- costs more to make than a move); a fast path is done with them before
-- the next one starts, and whatever fills one by hand sets every field of
-- the scanned form. The generation (gen, nil for 0) costs a record of a run
-- never replayed nothing but its field: the pattern without it is tried
-- first, and the one with it only when that fails.
local scan_r, scan_t = {}, {}

local function meta_scan(m, r)
  local st, total, succ, mid, created, started, ended, strat = string.match(m,
    '^(%a),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d+),(%-?%d*),(%-?%d*),(%a)$')
  local gen
  if not st then
    st, gen, total, succ, mid, created, started, ended, strat = string.match(m,
      '^(%a)(%d+),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d+),(%-?%d*),(%-?%d*),(%a)$')
    if not st then return nil end
  end
  r.st, r.gen, r.total, r.succ, r.mid, r.created, r.started, r.ended, r.strat =
    st, gen, total, succ, mid, created, started, ended, strat
  return r
end

local function meta_get(rk)
  local m = hget(rk, 'm')
  if not m then return nil end
  return meta_parse(m)
end

-- meta_pack packs a scanned record (its fields strings, mid set) with one
-- concatenation, and a parsed one (numbers) through itoa: Lua's own
-- number-to-string conversion in a concatenation costs about twice
-- string.format's, and itoa answers small counts from its cache.
local function meta_pack(r)
  local mid = r.mid
  if mid then
    return r.st .. (r.gen or '') .. ',' .. r.total .. ',' .. r.succ .. ',' .. mid .. ',' .. r.created .. ',' ..
      (r.started or '') .. ',' .. (r.ended or '') .. ',' .. r.strat
  end
  return r.st .. (r.gen or '') .. ',' .. itoa(r.total) .. ',' .. itoa(r.succ) .. ',' .. itoa(r.failed) .. ',' ..
    itoa(r.skipped) .. ',' .. itoa(r.cancelled) .. ',' .. (r.created_s or itoa(r.created)) .. ',' ..
    itoa(r.started or '') .. ',' .. itoa(r.ended or '') .. ',' .. r.strat
end

-- meta_counts returns a run's failed count and the count of its tasks
-- ended otherwise than succeeded, from a parsed or a scanned record.
local function meta_counts(r)
  local mid = r.mid
  if not mid then return r.failed, r.failed + r.skipped + r.cancelled end
  if mid == '0,0,0' then return 0, 0 end
  local f, k, c = string.match(mid, '^(%d+),(%d+),(%d+)$')
  f = tonumber(f)
  return f, f + k + c
end

local function meta_put(rk, r) hset(rk, 'm', meta_pack(r)) end

local function state_parse(s)
  local st, gen, attempt, epoch, crashes, resolved, satisfied, first, claim, ended, worker = string.match(s,
    '^(%a)(%d*),(%d+),(%d+),(%d+),(%d+),(%d+),(%-?%d*),(%-?%d*),(%-?%d*),(.*)$')
  if not st then return false end
  return {st = st, gen = gen, attempt = tonumber(attempt), epoch = tonumber(epoch), crashes = tonumber(crashes),
    resolved = tonumber(resolved), satisfied = tonumber(satisfied), first = first, claim = claim, ended = ended,
    worker = worker}
end

local function state_scan(s, t)
  local st, attempt, epoch, mid, first, claim, ended, worker = string.match(s,
    '^(%a),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d*),(%-?%d*),(%-?%d*),(.*)$')
  local gen
  if not st then
    st, gen, attempt, epoch, mid, first, claim, ended, worker = string.match(s,
      '^(%a)(%d+),(%d+),(%d+),(%d+,%d+,%d+),(%-?%d*),(%-?%d*),(%-?%d*),(.*)$')
    if not st then return nil end
  end
  t.st, t.gen, t.attempt, t.epoch, t.mid, t.first, t.claim, t.ended, t.worker =
    st, gen, attempt, epoch, mid, first, claim, ended, worker
  return t
end

local function state_get(rk, name)
  local s = hget(rk, 's:' .. name)
  if not s then return nil end
  return state_parse(s)
end

-- state_pack packs a scanned or a parsed state, as meta_pack does.
local function state_pack(t)
  local mid = t.mid
  if mid then
    return t.st .. (t.gen or '') .. ',' .. t.attempt .. ',' .. t.epoch .. ',' .. mid .. ',' .. (t.first or '') .. ',' ..
      (t.claim or '') .. ',' .. (t.ended or '') .. ',' .. t.worker
  end
  return t.st .. (t.gen or '') .. ',' .. itoa(t.attempt) .. ',' .. itoa(t.epoch) .. ',' .. itoa(t.crashes) .. ',' ..
    itoa(t.resolved) .. ',' .. itoa(t.satisfied) .. ',' .. itoa(t.first or '') .. ',' .. itoa(t.claim or '') .. ',' ..
    itoa(t.ended or '') .. ',' .. t.worker
end

local function state_put(rk, name, t) hset(rk, 's:' .. name, state_pack(t)) end

-- def_get parses the Lua-readable header of a task definition; the second
-- result is the whole field. The header carries the number of parents, so
-- no edge list is read here.
local function def_get(rk, name)
  local d = hget(rk, 'd:' .. name)
  if not d then return nil end
  local queue, prio, runat, delay, join, deps, apart = string.match(d,
    '^([^,\n]+),(%d),(%-?%d+),(%-?%d+),(%d),(%d+),([01])\n')
  if not queue then return false end
  return {queue = queue, prio = prio, runat = tonumber(runat), delay = tonumber(delay), join = join,
    deps = tonumber(deps), apart = apart == '1'}, d
end

-- def_tail answers the last two fields of the header of a definition d:,
-- its number of parents (a digit string) and its apart flag ('0' or '1'),
-- or nil when the header does not end so. A task without parents, the
-- most common, is read from the bytes before the header's newline, with
-- no pattern match.
local function def_tail(d)
  local nl = string.find(d, '\n', 1, true)
  if not nl or nl < 5 then return nil end
  local c1, z, c2, a = string.byte(d, nl - 4, nl - 1)
  if c2 ~= 44 or (a ~= 48 and a ~= 49) then return nil end
  local apart = a == 49 and '1' or '0'
  if z == 48 and c1 == 44 then return '0', apart end
  local deps = string.match(d, '^[^,\n]+,%d,%-?%d+,%-?%d+,%d,(%d+),[01]\n')
  if not deps then return nil end
  return deps, apart
end

-- handler_of returns the handler name of a task definition d (field d:):
-- the first string of the body after the header line and its version byte,
-- a uvarint length then the bytes (codec_task.go).
local function handler_of(d)
  local nl = string.find(d, '\n', 1, true)
  if not nl then return nil end
  local at, len, shift = nl + 2, 0, 0
  while true do
    local b = string.byte(d, at)
    if not b then return nil end
    at = at + 1
    if b < 128 then
      len = len + b * 2 ^ shift
      break
    end
    len = len + (b - 128) * 2 ^ shift
    shift = shift + 7
  end
  return string.sub(d, at, at + len - 1)
end

-- edges parses an edge list "name:cond name:cond" into {name, cond} pairs.
local function edges(s)
  local out = {}
  for name, cond in string.gmatch(s, '([^ :]+):(%d)') do
    out[#out + 1] = {name = name, cond = cond}
  end
  return out
end

-- set_queued keeps in field w:<task> when the task became ready to run,
-- or the due time it waits for when delayed, as ms after the run's
-- creation (a string): the queued time of its next attempt record. Every
-- move to ready or to a delayed status sets it (run_create for roots,
-- make_due, a retry, a release, a lost lease), but for the move of a due
-- delayed task to ready, which keeps its due time, and a claim given back
-- unstarted, which keeps the time it was first queued.
local function set_queued(rk, name, off) hset(rk, 'w:' .. name, off) end

-- record_head is the head of an attempt record (decodeAttempts in
-- codec_state.go): "attempt,epoch,claimOff,durMs,outcome,wlen,elen" then
-- ",delayMs,queuedOff" when the task's queued time is known (w:<task>;
-- a record of a task queued before it was kept ends after elen, or after
-- the delay of a retry), then ';'.
local function record_head(attempt, epoch, claim, dur, outcome, wl, el, delay, queued)
  local h = attempt .. ',' .. epoch .. ',' .. claim .. ',' .. dur .. ',' .. outcome .. ',' .. itoa(wl) .. ',' .. itoa(el)
  if queued then return h .. ',' .. (delay and int(delay) or '0') .. ',' .. queued .. ';' end
  if delay and delay > 0 then return h .. ',' .. int(delay) .. ';' end
  return h .. ';'
end

-- attempt writes the attempt record of the task's current claim into a
-- field of its own, a:<task>:<epoch>: a record is appended as a new field
-- and never rewritten, so a finish neither reads nor copies the records of
-- earlier attempts. Each epoch ends at most once (every write is fenced by
-- it), so a field is written once. delay is the retry delay chosen, in ms
-- (retry records only).
local function attempt(rk, name, t, r, now, outcome, err, delay)
  err = err or ''
  local claim = t.claim or 0
  if claim == '' then claim = 0 end
  if delay == 0 then delay = nil end
  local rec = record_head(itoa(t.attempt), itoa(t.epoch), itoa(claim), int(now - r.created - claim), outcome .. (t.gen or ''), #t.worker, #err,
    delay, hget(rk, 'w:' .. name))
  hset(rk, 'a:' .. name .. ':' .. itoa(t.epoch), rec .. t.worker .. err)
end

-- has_attempts reports whether the task has an attempt record from a claim
-- before the one of epoch claimed. A retry record exists when the attempt
-- number went past 1, a crash record when it crashed; otherwise only a
-- release can have left one, which is looked up epoch by epoch (a task is
-- released a handful of times at most). Runs written before per-epoch
-- fields keep their records in a:<task>.
local function has_attempts(rk, name, t, claimed)
  if tonumber(t.attempt) > 1 or tonumber(t.crashes) > 0 then return true end
  if hget(rk, 'a:' .. name) then return true end
  for e = claimed - 1, 1, -1 do
    if hget(rk, 'a:' .. name .. ':' .. e) then return true end
  end
  return false
end

-- folded reports whether the final attempt of a task whose definition is d
-- (field d:) is folded into its state rather than written as a record of
-- its own: a run of format version 8 on, whose version is the byte after
-- the header line of d: (codec.go). nl is the position of that '\n' when
-- the caller has it.
local function folded(d, nl)
  nl = nl or string.find(d, '\n', 1, true)
  return nl ~= nil and (string.byte(d, nl + 1) or 0) >= 8
end

-- unfold writes out, as the record a:<task>:<epoch> a version 7 finish
-- would have written, the final attempt folded into the state t of a task
-- that succeeded or failed (a run where folded holds), before a move
-- rewrites that state (a replay resets its offsets, its generation and
-- e:<task>). A task with a record for its epoch (an error text on a
-- success, a timeout, a version 7 finish) or ended otherwise has nothing
-- folded and is left alone. The record is built from the same strings the
-- finish would have used (decodeTaskAttempts in codec_state.go reads the
-- state the same way).
local function unfold(rk, name, t)
  local letter
  if t.st == 'S' then letter = 's' elseif t.st == 'F' then letter = 'f' else return end
  if tonumber(t.epoch) == 0 or t.ended == nil or t.ended == '' then return end
  local af = 'a:' .. name .. ':' .. itoa(t.epoch)
  if hget(rk, af) then return end
  local err = ''
  if letter == 'f' then err = hget(rk, 'e:' .. name) or '' end
  local claim = t.claim
  if claim == nil or claim == '' then claim = 0 end
  hset(rk, af, record_head(itoa(t.attempt), itoa(t.epoch), itoa(claim), int(t.ended - claim), letter .. (t.gen or ''),
    #t.worker, #err, nil, hget(rk, 'w:' .. name)) .. t.worker .. err)
end
