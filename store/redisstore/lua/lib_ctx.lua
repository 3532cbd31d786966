-- lib_ctx.lua: a call's context, made from the arguments every transition
-- script gets (the step and the retention), which the helpers of the
-- files after it take as ctx.
--
-- ctx carries what the transition helpers need: ctx.base, ctx.now,
-- ctx.retention (ms), ctx.wake (queue -> tasks readied or delayed by this
-- call, the wake-up tokens owed) and ctx.readied (ready entries pushed by
-- this call -> queue, so a claim in the same call takes their token back).
-- new_ctx takes the step argument of the Go side (stepArg in events.go):
-- "<now ms or empty>;<event cap>;<stats window, 0 when off>;<a claim's
-- inline results limit (TaskClaimParams.InlineResultsMax), or
-- empty>;<format version>": ctx.short says the events of run moves are
-- written short (format version 8; note_run).
-- retention is the retention argument of a script that may end a run,
-- "<ms>" or "<ms>:<history ms>" (retentionArg in redisstore.go), or 0:
-- ctx.retention (and ctx.rets, the same as sent), and ctx.hist, how long a finished run's attempt records
-- are kept (keep_history; 0: with the run). Its wake and readied are
-- kept across calls while they stay empty, as the buffers are (reset). A
-- claim empties readied by setting its entries to nil: next() then walks
-- the slots they left and finds none, and a later call's entries take
-- those slots again; nothing reads it with # or in order. A table a call
-- left entries in (it readied a task it did not claim, or failed midway)
-- is dropped.
local new_ctx
do
  local wake_t, readied_t = {}, {}
  -- The step and retention arguments a process sends are the same on
  -- every call but for a clock given in tests: their parse is kept with
  -- the strings it was made from, and made again only when one differs.
  local step_s, s_now, s_cap, s_win, s_inline, s_short = nil, '', '100000', 0, 0, false
  local ret_s, r_ret, r_rets, r_hist = nil, 0, '0', 0

  new_ctx = function(base, step, retention)
    if step ~= step_s then
      local now, cap, win, inline, fmt = string.match(step, '^([^;]*);(%d+);(%d+);?(%d*);?(%d*)$')
      if not now then now, cap, win, inline, fmt = step, '100000', '0', '', '' end
      step_s, s_now, s_cap, s_win, s_inline = step, now, cap, tonumber(win), tonumber(inline) or 0
      s_short = (tonumber(fmt) or 0) >= 8
    end
    local ms = now_ms(s_now)
    if retention ~= ret_s then
      local ret, rets, hist = 0, '0', 0
      if retention then
        local r, h = string.match(retention, '^(%d+):?(%d*)$')
        ret, hist = tonumber(r) or 0, tonumber(h) or 0
        if r then rets = r end
      end
      ret_s, r_ret, r_rets, r_hist = retention, ret, rets, hist
    end
    if next(wake_t) ~= nil then wake_t = {} end
    if next(readied_t) ~= nil then readied_t = {} end
    return {base = base, now = ms, nows = int(ms), retention = r_ret, rets = r_rets, hist = r_hist,
      wake = wake_t, readied = readied_t, evcap = s_cap, win = s_win, inline = s_inline, short = s_short}
  end
end
