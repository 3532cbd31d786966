package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/clock"
)

// Event stream caps: how many events the store's stream and each run's
// stream keep before dropping their oldest.
const (
	EventsGlobalCapDefault = 100_000
	EventsRunCapDefault    = 1_000
)

// WithEventCaps sets how many events the store's stream (global) and each
// run's stream (perRun) keep; older events are dropped and a reader behind
// them is told so. Zero or negative means the default of each.
func WithEventCaps(perRun, global int) Option {
	return func(s *Store) {
		if perRun > 0 {
			s.ev.runCap = perRun
		}
		if global > 0 {
			s.ev.globalCap = global
		}
	}
}

// eventLog holds the store's event stream: a ring of the newest globalCap
// events, each numbered by seq (the cursor is that number in decimal).
// Each run keeps its own events in run.events.
type eventLog struct {
	globalCap, runCap int
	seq               uint64
	ring              []plait.StoreEvent
	head              int // index of the oldest event in ring
	n                 int
	// dropped is the seq of the newest event dropped from the ring.
	dropped uint64
	// wake is closed and replaced when an event is appended and a reader
	// waits (waited).
	wake   chan struct{}
	waited bool
}

// runEvents is the stream of one run.
type runEvents struct {
	list    []plait.StoreEvent
	dropped uint64
}

// initLocked gives the caps no option set their defaults, once.
func (l *eventLog) initLocked() {
	if l.wake != nil {
		return
	}
	if l.globalCap == 0 {
		l.globalCap = EventsGlobalCapDefault
	}
	if l.runCap == 0 {
		l.runCap = EventsRunCapDefault
	}
	l.wake = make(chan struct{})
}

// appendLocked numbers ev and adds it to the store's stream and to r's.
func (s *Store) appendEventLocked(r *run, ev plait.StoreEvent) {
	l := &s.ev
	l.initLocked()
	l.seq++
	ev.Cursor = plait.EventCursor(strconv.FormatUint(l.seq, 10))
	if l.ring == nil {
		l.ring = make([]plait.StoreEvent, 0, min(l.globalCap, 1024))
	}
	if l.n < l.globalCap {
		if len(l.ring) < l.globalCap {
			l.ring = append(l.ring, ev)
		} else {
			l.ring[(l.head+l.n)%l.globalCap] = ev
		}
		l.n++
	} else {
		l.dropped = l.seq - uint64(l.n)
		l.ring[l.head] = ev
		l.head = (l.head + 1) % l.globalCap
	}
	re := &r.events
	if len(re.list) >= l.runCap {
		drop := len(re.list) - l.runCap + 1
		re.dropped = seqOf(re.list[drop-1].Cursor)
		re.list = append(re.list[:0], re.list[drop:]...)
	}
	re.list = append(re.list, ev)
	if l.waited {
		close(l.wake)
		l.wake = make(chan struct{})
		l.waited = false
	}
}

func seqOf(c plait.EventCursor) uint64 {
	n, _ := strconv.ParseUint(string(c), 10, 64)
	return n
}

// taskEventLocked records t's move from status from to its current status.
func (s *Store) taskEventLocked(t *task, from plait.TaskStatus, now time.Time) {
	if from == "" || from == t.status {
		return
	}
	r := t.run
	spec := t.spec()
	ev := plait.StoreEvent{
		Type: plait.TaskEventType(t.status), RunID: r.rec.ID, Task: t.inst.Name, TaskStatus: t.status,
		Attempt: t.inst.Attempt, Epoch: t.epoch, At: now, Queue: spec.Queue, Priority: spec.Priority,
		Handler: spec.Handler, Worker: t.inst.Worker,
		Workflow: r.rec.Workflow, Tenant: r.rec.Tenant, Service: r.rec.Service,
	}
	if from == plait.TaskRunning {
		ev.Duration = now.Sub(t.claimedAt)
	}
	switch t.status {
	case plait.TaskFailed, plait.TaskRetrying, plait.TaskDead, plait.TaskCancelled:
		ev.Error = t.inst.Error
	}
	s.appendEventLocked(r, ev)
}

// runEventLocked records r's move to its current status.
func (s *Store) runEventLocked(r *run, now time.Time) {
	s.appendEventLocked(r, plait.StoreEvent{
		Type: plait.RunEventType(r.rec.Status), RunID: r.rec.ID, RunStatus: r.rec.Status, At: now,
		Workflow: r.rec.Workflow, Tenant: r.rec.Tenant, Service: r.rec.Service,
	})
}

// EventRead returns the events after params.After of the store's stream or
// of one run's. See [plait.EventStore].
func (s *Store) EventRead(ctx context.Context, params *plait.EventReadParams) (*plait.EventReadResult, error) {
	if params == nil || params.Limit < 1 || params.Wait < 0 {
		return nil, fmt.Errorf("memstore: event read needs a limit >= 1 and a wait >= 0: %w", plait.ErrInvalidArgument)
	}
	var after uint64
	if params.After != "" {
		n, err := strconv.ParseUint(string(params.After), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("memstore: event cursor %q: %w", params.After, plait.ErrInvalidArgument)
		}
		after = n
	}
	var timer clock.Timer
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.ev.initLocked()
		res, err := s.readEventsLocked(params, after)
		if err != nil || len(res.Events) > 0 || res.FellBehind || params.Wait == 0 {
			s.mu.Unlock()
			return res, err
		}
		wake := s.ev.wake
		s.ev.waited = true
		s.mu.Unlock()
		if timer == nil {
			timer = clock.Real{}.NewTimer(params.Wait)
			defer timer.Stop()
		}
		select {
		case <-wake:
		case <-timer.C():
			s.mu.Lock()
			res, err = s.readEventsLocked(params, after)
			s.mu.Unlock()
			return res, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Store) readEventsLocked(params *plait.EventReadParams, after uint64) (*plait.EventReadResult, error) {
	res := &plait.EventReadResult{Cursor: params.After}
	var list []plait.StoreEvent
	var dropped uint64
	if params.RunID != "" {
		r := s.runs[params.RunID]
		if r == nil {
			return nil, fmt.Errorf("memstore: run %q: %w", params.RunID, plait.ErrNotFound)
		}
		list, dropped = r.events.list, r.events.dropped
		i := len(list)
		for i > 0 && seqOf(list[i-1].Cursor) > after {
			i--
		}
		list = list[i:]
		if len(list) > params.Limit {
			list = list[:params.Limit]
		}
		res.Events = append([]plait.StoreEvent(nil), list...)
	} else {
		l := &s.ev
		dropped = l.dropped
		// the ring holds seqs dropped+1 .. l.seq in order.
		first := l.seq - uint64(l.n) + 1
		start := uint64(0)
		if after >= first {
			start = after - first + 1
		}
		for k := start; k < uint64(l.n) && len(res.Events) < params.Limit; k++ {
			res.Events = append(res.Events, l.ring[(l.head+int(k))%l.globalCap])
		}
	}
	res.FellBehind = params.After != "" && after < dropped
	if len(res.Events) > 0 {
		res.Cursor = res.Events[len(res.Events)-1].Cursor
	}
	return res, nil
}
