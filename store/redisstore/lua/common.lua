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

-- key builds a shard-local key from the shard base ("<prefix>:{<shard>}:"),
-- mirroring keys.go. Only used for keys a script discovers while running;
-- they share the slot of the keys in KEYS by construction.
local function key(base, kind, a, b)
  if b ~= nil then return base .. kind .. ':' .. a .. ':' .. b end
  if a ~= nil then return base .. kind .. ':' .. a end
  return base .. kind
end

-- entry is a task's member in the ready lists, delayed zsets and the lease
-- zset: "<run> <task>" (run ids hold no space).
local function entry(id, name) return id .. ' ' .. name end

local function parse_entry(e)
  local sp = string.find(e, ' ', 1, true)
  if not sp then return nil end
  return string.sub(e, 1, sp - 1), string.sub(e, sp + 1)
end
