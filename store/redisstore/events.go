package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/clock"
)

// Event and stats defaults and bounds.
const (
	// EventsRunCapDefault is how many events a run's stream keeps.
	EventsRunCapDefault = 1_000
	// EventsGlobalCapDefault is how many events each shard's stream keeps.
	EventsGlobalCapDefault = 100_000
	// StatsWindowDefault is how many recent attempt durations of each task
	// name are kept for the percentiles.
	StatsWindowDefault = 1_000
	// EventsCapMax bounds WithEventCaps and WithStatsWindow.
	EventsCapMax = 100_000_000
)

// WithEventCaps sets how many events each run's stream (perRun) and each
// shard's stream (global) keep. Streams are trimmed with MAXLEN ~, so a
// stream holds at least its cap and at most about one stream node (100
// entries by default) more. Defaults to EventsRunCapDefault and
// EventsGlobalCapDefault; below 1 or above EventsCapMax is an error. The
// caps live in Redis (one small hash per shard, written by New), so the
// last store started with a prefix sets them for all its processes.
func WithEventCaps(perRun, global int) Option {
	return func(c *config) {
		if perRun < 1 || perRun > EventsCapMax || global < 1 || global > EventsCapMax {
			c.reject("WithEventCaps", strconv.Itoa(perRun)+", "+strconv.Itoa(global), "want 1.."+strconv.Itoa(EventsCapMax)+" each")
			return
		}
		c.eventRunCap, c.eventGlobalCap = perRun, global
	}
}

// WithStatsWindow sets how many recent attempt durations of each task name
// are kept for the percentiles of [plait.Scheduler.Stats]. Defaults to
// StatsWindowDefault; below 1 or above EventsCapMax is an error. Like the
// event caps, it lives in Redis.
func WithStatsWindow(n int) Option {
	return func(c *config) {
		if n < 1 || n > EventsCapMax {
			c.reject("WithStatsWindow", strconv.Itoa(n), "want 1.."+strconv.Itoa(EventsCapMax))
			return
		}
		c.statsWindow = n
	}
}

// writeEventConfig writes the caps and the window to each shard's config
// hash, in one pipeline. A failure is logged, not returned: the scripts
// then use the defaults.
func (s *Store) writeEventConfig(ctx context.Context) {
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := 0; sh < s.cfg.shards; sh++ {
			p.HSet(ctx, s.keys.eventConfig(sh), "er", s.cfg.eventRunCap, "eg", s.cfg.eventGlobalCap, "dw", s.cfg.statsWindow)
		}
		return nil
	})
	if err != nil {
		s.cfg.logger.Warn("redisstore: cannot write the event caps; the scripts use the defaults", "error", err)
	}
}

// EventRead reads the events after params.After from the stream of one run
// (a list in its shard's slot) or from the streams of every shard, merged
// in the order of their ids. A cursor of the store's stream holds one
// stream id per shard; a run's, the shard stream id of its last event. The fields a script does not write (queue,
// priority, handler, workflow, tenant, service) are read from the run hash,
// once per run and task of a read, and stay empty once the run expired.
// With Wait, a read that found nothing waits on the shared subscription
// connection for the next append. See [plait.EventStore].
func (s *Store) EventRead(ctx context.Context, params *plait.EventReadParams) (*plait.EventReadResult, error) {
	if params == nil || params.Limit < 1 || params.Wait < 0 {
		return nil, fmt.Errorf("redisstore: event read needs a limit >= 1 and a wait >= 0: %w", plait.ErrInvalidArgument)
	}
	var read func() (*plait.EventReadResult, error)
	if params.RunID != "" {
		sh, err := s.runShard(params.RunID)
		if err != nil {
			return nil, err
		}
		pos, err := parseCursor(params.After, 1)
		if err != nil {
			return nil, err
		}
		key := s.keys.runEvents(sh, params.RunID)
		read = func() (*plait.EventReadResult, error) { return s.readRunList(ctx, key, pos[0], params) }
	} else {
		var streams []string
		for sh := 0; sh < s.cfg.shards; sh++ {
			streams = append(streams, s.keys.events(sh))
		}
		pos, err := parseCursor(params.After, len(streams))
		if err != nil {
			return nil, err
		}
		read = func() (*plait.EventReadResult, error) { return s.readStreams(ctx, streams, pos, params) }
	}
	res, err := read()
	if err != nil || len(res.Events) > 0 || res.FellBehind || params.Wait == 0 {
		return res, err
	}
	w, err := s.hub.watch(ctx, s.keys.eventsChannel())
	if err != nil {
		return nil, err
	}
	defer w.stop()
	t := clock.Real{}.NewTimer(params.Wait)
	defer t.Stop()
	select {
	case <-w.ready:
	case <-t.C():
		return read()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		res, err := read()
		if err != nil || len(res.Events) > 0 || res.FellBehind {
			return res, err
		}
		select {
		case <-w.signal:
		case <-t.C():
			return read()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// parseCursor splits a cursor into one stream id per stream; the empty
// cursor is the start of each.
func parseCursor(c plait.EventCursor, n int) ([]string, error) {
	pos := make([]string, n)
	if c == "" {
		return pos, nil
	}
	parts := strings.Split(string(c), ",")
	if len(parts) != n {
		return nil, fmt.Errorf("redisstore: event cursor %q is not one of this stream: %w", c, plait.ErrInvalidArgument)
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		ms, seq, ok := strings.Cut(p, "-")
		if _, err := strconv.ParseUint(ms, 10, 64); err != nil || !ok {
			return nil, fmt.Errorf("redisstore: event cursor %q: %w", c, plait.ErrInvalidArgument)
		}
		if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
			return nil, fmt.Errorf("redisstore: event cursor %q: %w", c, plait.ErrInvalidArgument)
		}
		pos[i] = p
	}
	return pos, nil
}

// streamIDLess orders two stream ids.
func streamIDLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	an, _ := strconv.ParseUint(am, 10, 64)
	bn, _ := strconv.ParseUint(bm, 10, 64)
	if an != bn {
		return an < bn
	}
	aq, _ := strconv.ParseUint(as, 10, 64)
	bq, _ := strconv.ParseUint(bs, 10, 64)
	return aq < bq
}

// readStreams reads up to params.Limit events after pos from each stream in
// one pipeline (XRANGE from the cursor's own id, inclusive, so a cursor
// whose entry the cap removed is seen) and merges them.
func (s *Store) readStreams(ctx context.Context, streams, pos []string, params *plait.EventReadParams) (*plait.EventReadResult, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(streams))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range streams {
			start := pos[i]
			if start == "" {
				start = "-"
			}
			cmds[i] = p.XRangeN(ctx, k, start, "+", int64(params.Limit)+1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	res := &plait.EventReadResult{Cursor: params.After}
	lists := make([][]redis.XMessage, len(streams))
	for i, c := range cmds {
		msgs, err := c.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		if pos[i] != "" {
			if len(msgs) > 0 && msgs[0].ID == pos[i] {
				msgs = msgs[1:]
			} else if len(msgs) > 0 {
				res.FellBehind = true
			}
		}
		lists[i] = msgs
	}
	cur := append([]string(nil), pos...)
	idx := make([]int, len(streams))
	for len(res.Events) < params.Limit {
		best := -1
		for i, l := range lists {
			if idx[i] < len(l) && (best < 0 || streamIDLess(l[idx[i]].ID, lists[best][idx[best]].ID)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		m := lists[best][idx[best]]
		idx[best]++
		cur[best] = m.ID
		ev, err := decodeEvent(m)
		if err != nil {
			s.cfg.logger.Warn("redisstore: skipping an unreadable event", "id", m.ID, "error", err)
		} else {
			ev.Cursor = plait.EventCursor(strings.Join(cur, ","))
			res.Events = append(res.Events, ev)
		}
		res.Cursor = plait.EventCursor(strings.Join(cur, ","))
	}
	if err := s.enrichEvents(ctx, res.Events); err != nil {
		return nil, err
	}
	return res, nil
}

// readRunList reads the events of a run after the stream id after from
// its list (at most the run cap long, so read whole). The list is behind a
// reader when its first event is no longer the run's first (run_pending):
// the cap dropped the oldest.
func (s *Store) readRunList(ctx context.Context, key, after string, params *plait.EventReadParams) (*plait.EventReadResult, error) {
	list, err := s.client.LRange(ctx, key, 0, -1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	res := &plait.EventReadResult{Cursor: params.After}
	start := 0
	if after != "" {
		start = len(list)
		for start > 0 {
			id, _, _ := strings.Cut(list[start-1], " ")
			if !streamIDLess(after, id) {
				break
			}
			start--
		}
		if start == 0 && len(list) > 0 {
			_, v, _ := strings.Cut(list[0], " ")
			res.FellBehind = !strings.HasPrefix(v, "r,P,")
		}
	}
	for _, item := range list[start:] {
		if len(res.Events) == params.Limit {
			break
		}
		id, v, _ := strings.Cut(item, " ")
		ev, err := decodeEvent(redis.XMessage{ID: id, Values: map[string]any{"v": v}})
		res.Cursor = plait.EventCursor(id)
		if err != nil {
			s.cfg.logger.Warn("redisstore: skipping an unreadable event", "id", id, "error", err)
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

// decodeEvent decodes a stream entry written by flush_events
// (lua/lib_buffers.lua): field v, "kind,letter,attempt,epoch,nowMs,durMs,
// run,task,worker" then a newline and the error text.
func decodeEvent(m redis.XMessage) (plait.StoreEvent, error) {
	v, _ := m.Values["v"].(string)
	head, errText, _ := strings.Cut(v, "\n")
	f := strings.Split(head, ",")
	if len(f) != 9 || len(f[1]) != 1 {
		return plait.StoreEvent{}, corrupt("event %q is malformed", clip(v))
	}
	var ev plait.StoreEvent
	attempt, err1 := strconv.Atoi(f[2])
	epoch, err2 := strconv.ParseInt(f[3], 10, 64)
	now, err3 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return ev, corrupt("event %q: %v", clip(v), err)
	}
	if f[5] != "" {
		d, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil {
			return ev, corrupt("event %q: %v", clip(v), err)
		}
		ev.Duration = time.Duration(d) * time.Millisecond
	}
	ev.At = msTime(now)
	ev.RunID, ev.Task, ev.Worker, ev.Error = f[6], f[7], f[8], errText
	switch f[0] {
	case "t":
		st, ok := taskStatusOf(f[1][0])
		if !ok {
			return ev, corrupt("event %q: task status", clip(v))
		}
		ev.TaskStatus, ev.Type = st, plait.TaskEventType(st)
		ev.Attempt, ev.Epoch = attempt, epoch
	case "r":
		st, ok := runStatusOf(f[1])
		if !ok {
			return ev, corrupt("event %q: run status", clip(v))
		}
		ev.RunStatus, ev.Type = st, plait.RunEventType(st)
	default:
		return ev, corrupt("event %q: kind", clip(v))
	}
	return ev, nil
}

// enrichEvents fills the fields that live in the run hash, with one
// pipelined HMGET per run of the batch.
func (s *Store) enrichEvents(ctx context.Context, evs []plait.StoreEvent) error {
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
		prio     plait.Priority
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

var _ plait.EventStore = (*Store)(nil)
