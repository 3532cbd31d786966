#!lua name=plaitprobe
-- probe.lua: what single Lua and redis.call operations cost redis-server,
-- in instructions, for bench/luaprobe/probe.sh. Each function does one
-- thing once (or ten times, where a name says so) and returns 1; probe.sh
-- subtracts the cost of 'nothing' (an FCALL that does nothing).
local function now_ms(arg)
  local n = tonumber(arg)
  if n then return n end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local kept = {}
redis.register_function('nothing', function(k, a) return 1 end)
redis.register_function('time', function(k, a) now_ms('') return 1 end)
redis.register_function('lpop_empty', function(k, a) redis.call('LPOP', k[1], '64') return 1 end)
redis.register_function('zrange_empty', function(k, a) redis.call('ZRANGE', k[1], '0', '0', 'WITHSCORES') return 1 end)
redis.register_function('match_4', function(k, a)
  string.match(a[1], '^([^;]*);(%d+);(%d+);?(%d*)$')
  return 1
end)
redis.register_function('format_ms_x10', function(k, a)
  for i = 1, 10 do string.format('%d', 1764160000000 + i) end
  return 1
end)
redis.register_function('concat_ms_x10', function(k, a)
  for i = 1, 10 do local _ = 'x' .. (1764160000000 + i) end
  return 1
end)
redis.register_function('tonumber_x10', function(k, a)
  for i = 1, 10 do tonumber(a[1]) end
  return 1
end)
redis.register_function('table_12', function(k, a)
  kept[1] = {a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9, j = 10, k = 11, l = 12}
  return 1
end)
