-- lib_handoff.lua: the hand-off of a claim: the ready entries a step of
-- the same call buffered (children a finish released, tasks it sent back
-- to ready) are popped from the buffer as from the tail of their lists, so a
-- task made ready and claimed by one call is never pushed and popped. The
-- buffers are held by flush (lib_buffers.lua); claim_tasks pops them with
-- held_fill and pushes what it left with held_flush.

-- held_fill completes what an LPOP of list lk asking for want entries
-- answered (es, false when the list was empty) with entries held for lk,
-- up to want in all: the answer the LPOP would have given had flush pushed
-- them. Returns false when there is none. Called only while held_n > 0.
local function held_fill(lk, es, want)
  local all = held[lk]
  if not all then return es end
  if not held_was[lk] then held_was[lk] = es and 'f' or 'e' end
  local got = es and #es or 0
  local at = held_at[lk] or 1
  if got >= want or at > #all then return es end
  es = es or {}
  while got < want and at <= #all do
    got = got + 1
    es[got] = all[at]
    at = at + 1
  end
  held_at[lk] = at
  return es
end

-- held_flush pushes the held entries no pop took to their lists, and
-- registers each queue whose list the push would have made non-empty
-- (register_queue): one seen empty when first popped, or not popped and
-- empty now.
local function held_flush()
  if held_n == 0 then return end
  for _, lk in ipairs(held_order) do
    local es, at, was = held[lk], held_at[lk] or 1, held_was[lk]
    held_at[lk], held_was[lk] = nil, nil
    local empty = was == 'e'
    for i = at, #es, 1000 do
      local j = math.min(i + 999, #es)
      local len = redis.call('RPUSH', lk, unpack(es, i, j))
      if not was and i == at and len == j - i + 1 then empty = true end
    end
    if empty then
      -- lk is <base>q:<queue>:<p>, p one digit
      register_queue(push_base, string.sub(lk, #push_base + 3, -3))
    end
  end
  held, held_order, held_n = held_none, held_none, 0
end
