package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// WithEventCap sets the event cap, which means the same on every store:
// each event stream keeps about its newest n events. On Redis a stream
// entry holds the events of one script call (one to thousands), so the
// stream is trimmed, with MAXLEN ~, to n divided by the recent average of
// events per entry: it keeps about n events, at least n while calls are
// alike, and a stream node or so more. Redis keeps one stream per shard,
// and a run's events are read from its shard's stream, so this caps them
// too. Defaults to
// [store.EventCapDefault]; below 1 or above [store.EventCapMax] is an
// error. Every process of a prefix should use the same cap: each trims to
// its own.
func WithEventCap(n int) Option {
	return func(c *config) {
		if err := store.CheckEventCap(n); err != nil {
			c.reject("WithEventCap", strconv.Itoa(n), err.Error())
			return
		}
		c.eventCap = n
	}
}

// stepArg is the first argument of the scripts that change statuses: the
// "now" of nowArg, then ";" the event cap, ";" the stats window (0 when
// stats are off), ";" a claim's inline results limit (empty elsewhere) and
// ";" the format version the store writes (WithFormatVersion), so a
// transition reads its settings from its arguments and not from Redis.
func (s *Store) stepArg() string { return s.stepWith(0) }

// claimStepArg is stepArg for a claim: with the claim's inline results
// limit (TaskClaimParams.InlineResultsMax) when it has one.
func (s *Store) claimStepArg(p *store.TaskClaimParams) string {
	if p == nil || p.InlineResultsMax <= 0 {
		return s.stepArg()
	}
	return s.stepWith(p.InlineResultsMax)
}

func (s *Store) stepWith(inline int) string {
	in := ""
	if inline > 0 {
		in = strconv.Itoa(inline)
	}
	return s.nowArg() + ";" + strconv.Itoa(s.cfg.eventCap) + ";" + strconv.Itoa(s.cfg.statsWindow) + ";" + in + ";" +
		strconv.Itoa(int(s.cfg.format))
}

// EventRead reads the events after params.After from the stream of one run
// (a list in its shard's slot) or from the streams of every shard, merged
// in the order of their ids. A cursor of the store's stream holds one
// stream id per shard; a run's, the shard stream id of its last event. The fields a script does not write (queue,
// priority, handler, workflow, tenant, service) are read from the run hash,
// once per run and task of a read, and stay empty once the run expired.
// With Wait, a read that found nothing waits on the shared subscription
// connection for the next append. A read from the end of the streams or
// from a time first resolves that start into a cursor (eventStart). See
// [store.EventStore].
func (s *Store) EventRead(ctx context.Context, params *store.EventReadParams) (*store.EventReadResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	started := params.After == store.EventCursorLatest || !params.Since.IsZero()
	var read func() (*store.EventReadResult, error)
	if params.RunID != "" {
		sh, err := s.runShard(params.RunID)
		if err != nil {
			return nil, err
		}
		if started {
			if params, err = s.resolveStart(ctx, []string{s.keys.events(sh)}, params); err != nil {
				return nil, err
			}
		}
		pos, err := parseCursor(params.After, 1)
		if err != nil {
			return nil, err
		}
		read = func() (*store.EventReadResult, error) { return s.readRun(ctx, sh, params.RunID, pos[0], params) }
	} else {
		var streams []string
		for sh := 0; sh < s.cfg.shards; sh++ {
			streams = append(streams, s.keys.events(sh))
		}
		if started {
			var err error
			if params, err = s.resolveStart(ctx, streams, params); err != nil {
				return nil, err
			}
		}
		pos, err := parseCursor(params.After, len(streams))
		if err != nil {
			return nil, err
		}
		read = func() (*store.EventReadResult, error) { return s.readStreams(ctx, streams, pos, params) }
	}
	res, err := read()
	if err != nil || len(res.Events) > 0 || res.FellBehind || params.Wait == 0 {
		return res, err
	}
	w, err := s.hub.watch(ctx, s.keys.eventsChannel(), "")
	if err != nil {
		return nil, err
	}
	defer w.stop()
	t := clock.Real{}.NewTimer(params.Wait)
	defer t.Stop()
	// Read again once subscribed, and at every signal (as RunWait does).
	ready := w.ready
	for {
		select {
		case <-ready:
			ready = nil
		case <-w.signal:
		case <-t.C():
			return read()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res, err := read()
		if err != nil || len(res.Events) > 0 || res.FellBehind {
			return res, err
		}
	}
}

// readStreams reads up to params.Limit events after pos from each stream in
// one pipeline (XRANGE from the cursor's own id, inclusive, so a cursor
// whose entry the cap removed is seen) and merges them.
func (s *Store) readStreams(ctx context.Context, streams, pos []string, params *store.EventReadParams) (*store.EventReadResult, error) {
	cmds := make([]*redis.Cmd, len(streams))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range streams {
			start := "-"
			if pos[i] != "" {
				start, _, _ = splitPos(pos[i])
			}
			cmds[i] = xrange(ctx, p, k, start, params.Limit+1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	res := &store.EventReadResult{Cursor: params.After}
	lists := make([][]rawEvent, len(streams))
	for i, c := range cmds {
		msgs, err := readEntries(c)
		if err != nil {
			return nil, err
		}
		var items []rawEvent
		for j, m := range msgs {
			for _, r := range m.events() {
				if pos[i] != "" && !posLess(pos[i], r.pos) {
					continue
				}
				items = append(items, r)
			}
			if j == 0 && pos[i] != "" {
				id, _, _ := splitPos(pos[i])
				res.FellBehind = res.FellBehind || m.id != id
			}
		}
		lists[i] = items
	}
	cur := append([]string(nil), pos...)
	idx := make([]int, len(streams))
	for len(res.Events) < params.Limit {
		best := -1
		for i, l := range lists {
			if idx[i] < len(l) && (best < 0 || posLess(l[idx[i]].pos, lists[best][idx[best]].pos)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		it := lists[best][idx[best]]
		idx[best]++
		cur[best] = it.pos
		res.Cursor = store.EventCursor(strings.Join(cur, ","))
		ev, err := decodeEvent(it)
		if err != nil {
			s.cfg.logger.Warn("redisstore: skipping an unreadable event", "position", it.pos, "error", err)
			continue
		}
		ev.Cursor = res.Cursor
		res.Events = append(res.Events, ev)
	}
	if err := s.enrichEvents(ctx, res.Events); err != nil {
		return nil, err
	}
	return res, nil
}

// runScanChunk is how many stream entries one XRANGE of a run's read
// fetches while it looks for the run's events.
const runScanChunk = 1000

// readRun reads the events of one run after the position after from its
// shard's stream, which holds the events of every run of the shard: there
// is no stream per run, so a transition writes one stream entry and no key
// per run (docs/redis-schema.md gives the numbers). The read starts at the
// cursor's entry, or without one at the run's creation (stream ids are
// Redis TIME in ms, as the run's creation time is when the store uses the
// server's clock; under WithClock at the stream's start), and fetches
// entries in chunks of runScanChunk until it has params.Limit events of the
// run or reaches the end. A cursor whose entry the cap removed is behind.
func (s *Store) readRun(ctx context.Context, sh int, runID, after string, params *store.EventReadParams) (*store.EventReadResult, error) {
	key := s.keys.events(sh)
	start := "-"
	if after != "" {
		start, _, _ = splitPos(after)
	} else if s.cfg.clock == nil {
		m, err := s.client.HGet(ctx, s.keys.run(sh, runID), "m").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		if meta, err := decodeMeta(m); err == nil {
			start = strconv.FormatInt(meta.created, 10) + "-0"
		}
	}
	res := &store.EventReadResult{Cursor: params.After}
	first := true
	for len(res.Events) < params.Limit {
		msgs, err := readEntries(xrange(ctx, s.client, key, start, runScanChunk))
		if err != nil {
			return nil, err
		}
		for j, m := range msgs {
			if first && j == 0 && after != "" {
				id, _, _ := splitPos(after)
				res.FellBehind = m.id != id
			}
			for _, r := range m.events() {
				if after != "" && !posLess(after, r.pos) {
					continue
				}
				if r.run != runID || len(res.Events) == params.Limit {
					continue
				}
				ev, err := decodeEvent(r)
				res.Cursor = store.EventCursor(r.pos)
				if err != nil {
					s.cfg.logger.Warn("redisstore: skipping an unreadable event", "position", r.pos, "error", err)
					continue
				}
				ev.Cursor = res.Cursor
				res.Events = append(res.Events, ev)
			}
		}
		first = false
		if len(msgs) < runScanChunk {
			break
		}
		start = "(" + msgs[len(msgs)-1].id
	}
	if err := s.enrichEvents(ctx, res.Events); err != nil {
		return nil, err
	}
	return res, nil
}

// decodeEvent decodes one event written by note_task or note_run
// (lua/lib_status.lua): a task's "<task>,<durMs>,<packed state>" or a
// run's "!<packed meta>", then, for a task event with an error, a newline
// and the error text; or by a claim (lua/lib_claim.lua) for a task set
// aside or held back: "?<task>,<waiting for>", "?<gen>:<task>,<waiting
// for>" in a generation above 0; or by a progress report
// (lua/task_progress.lua): "%<task>,..." (decodeProgressEvent); or by a
// note (lua/run_note.lua): "#<generation>;<text>" (decodeNoteEvent). The
// generation of the others is in the packed state or meta
// (decodeState, decodeMeta).
func decodeEvent(r rawEvent) (store.StoreEvent, error) {
	var ev store.StoreEvent
	now, err := strconv.ParseInt(r.now, 10, 64)
	if err != nil || r.run == "" || r.v == "" {
		return ev, corrupt("event %s of run %s at %s is malformed", clip(r.v), clip(r.run), clip(r.now))
	}
	ev.At, ev.RunID = msTime(now), r.run
	if r.v[0] == '?' {
		// A task set aside or held back (lua/lib_claim.lua).
		task, waiting, ok := strings.Cut(r.v[1:], ",")
		if g, name, hasGen := strings.Cut(task, ":"); hasGen {
			n, err := strconv.ParseInt(g, 10, 64)
			if err != nil || n < 1 {
				return ev, corrupt("event %s: generation", clip(r.v))
			}
			task, ev.Generation = name, n
		}
		if !ok || task == "" {
			return ev, corrupt("event %s is malformed", clip(r.v))
		}
		ev.Task, ev.WaitingFor = task, waiting
		ev.TaskStatus, ev.Type = store.TaskReady, store.EventTaskWaiting
		return ev, nil
	}
	if r.v[0] == '%' {
		return ev, decodeProgressEvent(&ev, r.v[1:])
	}
	if r.v[0] == '#' {
		return ev, decodeNoteEvent(&ev, r.v[1:])
	}
	if r.v[0] == '!' {
		// A run's move: its status letter and generation (format version
		// 8), or its whole meta (version 7).
		v := r.v[1:]
		if strings.IndexByte(v, ',') < 0 {
			letter, gen, err := splitGen(v)
			if err != nil {
				return ev, err
			}
			st, ok := runStatusOf(letter)
			if !ok {
				return ev, corrupt("event %s: run status", clip(r.v))
			}
			ev.RunStatus, ev.Type, ev.Generation = st, store.RunEventType(st), gen
			return ev, nil
		}
		m, err := decodeMeta(v)
		if err != nil {
			return ev, err
		}
		ev.RunStatus, ev.Type, ev.Generation = m.status, store.RunEventType(m.status), m.gen
		return ev, nil
	}
	head, errText, _ := strings.Cut(r.v, "\n")
	f := strings.SplitN(head, ",", 3)
	if len(f) != 3 {
		return ev, corrupt("event %s is malformed", clip(r.v))
	}
	st, err := decodeState(f[2])
	if err != nil {
		return ev, err
	}
	ev.Task = f[0]
	ev.TaskStatus, ev.Type = st.status, store.TaskEventType(st.status)
	ev.Attempt, ev.Epoch, ev.Error, ev.Generation = st.attempt, st.epoch, errText, st.gen
	ev.Worker, ev.Node = store.SplitWorker(st.worker)
	switch {
	case f[1] != "":
		d, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return ev, corrupt("event %s: duration", clip(r.v))
		}
		ev.Duration = time.Duration(d) * time.Millisecond
	case st.ended >= 0 && st.claim >= 0:
		ev.Duration = time.Duration(st.ended-st.claim) * time.Millisecond
	}
	return ev, nil
}

// enrichEvents fills the fields that live in the run hash, with one
// pipelined HMGET per run of the batch.
func (s *Store) enrichEvents(ctx context.Context, evs []store.StoreEvent) error {
	if len(evs) == 0 {
		return nil
	}
	type want struct {
		fields []string
		seen   map[string]bool
		cmd    *redis.SliceCmd
	}
	runs := map[string]*want{}
	var order []string
	for i := range evs {
		e := &evs[i]
		w := runs[e.RunID]
		if w == nil {
			w = &want{fields: []string{"i"}, seen: map[string]bool{}}
			runs[e.RunID] = w
			order = append(order, e.RunID)
		}
		if e.Task != "" && !w.seen[e.Task] {
			w.seen[e.Task] = true
			w.fields = append(w.fields, "d:"+e.Task)
		}
	}
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range order {
			sh, ok := shardOf(id, s.cfg.shards)
			if !ok {
				continue
			}
			w := runs[id]
			w.cmd = p.HMGet(ctx, s.keys.run(sh, id), w.fields...)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return mapErr(err)
	}
	type taskInfo struct {
		queue    string
		prio     store.Priority
		handler  string
		resolved bool
	}
	infos := map[string]runInfo{}
	defs := map[string]taskInfo{}
	for _, id := range order {
		w := runs[id]
		if w.cmd == nil {
			continue
		}
		vals, err := w.cmd.Result()
		if err != nil {
			continue
		}
		for j, f := range w.fields {
			raw, ok := vals[j].(string)
			if !ok {
				continue
			}
			if f == "i" {
				if in, err := decodeRunInfo(raw); err == nil {
					infos[id] = in
				}
				continue
			}
			name := strings.TrimPrefix(f, "d:")
			if d, err := decodeDef(name, raw, true); err == nil {
				defs[id+" "+name] = taskInfo{queue: d.spec.Queue, prio: d.spec.Priority, handler: d.spec.Handler, resolved: true}
			}
		}
	}
	for i := range evs {
		e := &evs[i]
		if in, ok := infos[e.RunID]; ok {
			e.Workflow, e.Tenant, e.Service = in.Workflow, in.Tenant, in.Service
		}
		if e.Task != "" {
			if d, ok := defs[e.RunID+" "+e.Task]; ok {
				e.Queue, e.Priority, e.Handler = d.queue, d.prio, d.handler
			}
		}
	}
	return nil
}

var _ store.EventStore = (*Store)(nil)
