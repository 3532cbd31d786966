-- lease_extend.lua: push held leases out to now + duration.
--
-- KEYS[1]    <prefix>:{s}:active       lease zset
-- KEYS[1+i]  <prefix>:{s}:r:<run i>    run hash of the i-th lease
-- ARGV[1]  now in ms since the Unix epoch, or "" to use Redis TIME
-- ARGV[2]  lease duration in ms
-- ARGV[3]  number of leases n
-- ARGV[4+3(i-1) ..]  per lease: run id, task, epoch
--
-- Transition: none; the task stays U, only its lease deadline moves.
--
-- Returns {untilMs, then n codes: OK extended, NOT_FOUND, STALE (stale
-- epoch), CORRUPT (corrupt record)}.
--
-- Retried: extends again, to now + duration as of the retry.
-- Lost data: a lease whose run hash Redis lost answers NOT_FOUND, and the
-- worker stops the attempt (its lease is lost). A lease entry lost from
-- the lease zset while its task still runs under the epoch is put back by
-- the ZADD, so the sweep watches it again.
-- Out of memory: the function is declared allow-oom and runs whole: its
-- ZADDs update members the lease zset already holds, so a held lease is
-- never lost to a full Redis. On the EVALSHA path (no functions) Redis
-- refuses the first ZADD: the call fails and nothing changes.
-- Cut off: a worker cut off extends nothing: its handlers are cancelled
-- with ErrLeaseLost by its own timer before their leases can expire in
-- Redis, and the sweep requeues the tasks under a new epoch; an extend
-- that gets through afterwards answers STALE, which stops the attempt
-- too.

-- Each lease reads its run's meta and its task's state with one HMGET and
-- checks them in their scanned form (meta_scan, state_scan: no number
-- conversion), its epoch compared as the digits both sides write; the
-- deadline goes to every ZADD as the string made once.

local now = now_ms(ARGV[1])
local until_ms = now + tonumber(ARGV[2])
local until_s = int(until_ms)
local n = tonumber(ARGV[3])
local out = {until_s}
for i = 1, n do
  local a = 4 + 3 * (i - 1)
  local rk, id, name = KEYS[1 + i], ARGV[a], ARGV[a + 1]
  local code = OK
  local v = redis.call('HMGET', rk, 'm', 's:' .. name)
  local m, s = v[1], v[2]
  if not m then code = NOT_FOUND
  elseif not meta_scan(m, scan_r) then code = CORRUPT
  elseif not s then code = NOT_FOUND
  else
    local t = state_scan(s, scan_t)
    if not t then code = CORRUPT
    elseif t.st ~= 'U' or t.epoch ~= ARGV[a + 2] then code = STALE
    else redis.call('ZADD', KEYS[1], until_s, entry(id, name)) end
  end
  out[#out + 1] = code
end
return out
