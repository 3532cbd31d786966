-- common.lua: key and entry helpers shared by every script, first of the
-- files scripts.go puts together (see there). Nothing here calls Redis
-- except now_ms, for TIME.

local function now_ms(arg)
  local n = tonumber(arg)
  if n then return n end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function int(n) return string.format('%d', n) end

-- itoa is int for the small counts of the hot paths (epochs, attempts,
-- lengths, counters): Lua turns a number into a string through sprintf's
-- floating-point path, which costs a claim and finish about a tenth of
-- Redis's work, so the strings of 0 .. 1023 are kept once made. A
-- function library keeps its locals between calls; a script rebuilt per
-- call (EVAL) rebuilds the few it uses. A digit string is its own answer.
local small_ints = {}
local function itoa(n)
  local s = small_ints[n]
  if s then return s end
  if type(n) == 'string' then return n end
  s = string.format('%d', n)
  if n >= 0 and n < 1024 and n % 1 == 0 then small_ints[n] = s end
  return s
end

-- key builds a shard-local key from the shard base ("<prefix>:{<shard>}:"),
-- mirroring keys.go. Only used for keys a script discovers while running;
-- they share the slot of the keys in KEYS by construction.
local function key(base, kind, a, b)
  if b ~= nil then return base .. kind .. ':' .. a .. ':' .. b end
  if a ~= nil then return base .. kind .. ':' .. a end
  return base .. kind
end

-- skiplist_pin is a member the lease zset and the running index always
-- hold, longer than zset-max-listpack-value (64 bytes): a zset holding a
-- member that long is kept in Redis's skiplist encoding, where a ZADD or
-- ZREM costs O(log n). Without it these two zsets, which stay small (the
-- tasks in flight, the runs started and not ended) and take two writes per
-- task or run, would be listpacks, where each write scans and moves the
-- whole list: about a third more Redis CPU for those writes, measured. It
-- rides in the ZADD that adds a lease or a running run, so it costs no
-- call and comes back by itself after data loss. Its score is out of reach
-- of every reader: +inf in the lease zset (the sweep reads deadlines up to
-- now), -1 in the running index (queries and counts start at 0). It is
-- spelled out: a library's top level may not call string functions.
-- Faults: a resent call adds it again to no effect (ZADD of a member it
-- holds at the same score); after data loss the next such ZADD brings it
-- back; when Redis is full it is refused with the ZADD it rides in, which
-- the script's own header covers; a cut-off worker changes nothing of it.
local skiplist_pin = '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'

-- entry is a task's member in the ready lists, delayed zsets and the lease
-- zset: "<run> <task>" (run ids hold no space).
local function entry(id, name) return id .. ' ' .. name end

local function parse_entry(e)
  local sp = string.find(e, ' ', 1, true)
  if not sp then return nil end
  return string.sub(e, 1, sp - 1), string.sub(e, sp + 1)
end
