-- run_note.lua: a note written into a run's history (RunNote).
--
-- KEYS[1]  <prefix>:{s}:r:<run>   run hash
-- ARGV[1]  the step argument (new_ctx, lib_ctx.lua): now in ms since the Unix
--          epoch or "" to use Redis TIME, the stream cap in events, the stats
--          window (0 when off), a claim's inline limit, the format version
-- ARGV[2]  shard base "<prefix>:{s}:" (the event stream)
-- ARGV[3]  run id
-- ARGV[4]  the note's text (at most store.RunNoteTextMax bytes, checked by
--          the Go side)
--
-- Transition: none. Reads the run's field m (HGET) for its existence and
-- generation and appends one event to the shard's stream,
-- "#<generation>;<text>" (the generation '' for 0; events.go
-- decodeEvent), written by flush_events as every event is.
--
-- Returns {OK}, {NOT_FOUND} no run, {CORRUPT} a corrupt record.
--
-- Retried: a resend appends the note a second time: a note is history,
-- and two equal lines say no more than one.
-- Lost data: a run whose hash Redis lost answers NOT_FOUND and nothing is
-- written; a lost stream loses its notes with the other events.
-- Out of memory: declared without allow-oom: a full Redis refuses the call
-- up front and the caller learns it (plait.ErrStoreFull); the note is
-- the call's only write, so on the EVALSHA path too it is refused whole.
-- Cut off: the call is atomic; a caller cut off mid-call wrote the note or
-- did not, and the run's events tell which.

local ctx = new_ctx(ARGV[2], ARGV[1])
local m = redis.call('HGET', KEYS[1], 'm')
if not m then return {NOT_FOUND} end
local gen = string.match(m, '^%a(%d*),')
if not gen then return {CORRUPT} end
note(ctx, ARGV[3], '#' .. gen .. ';' .. ARGV[4], false)
flush_events()
return {OK}
