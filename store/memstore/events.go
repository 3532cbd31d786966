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
// Each run keeps its own events in run.events. Events are kept as compact
// records that point at their run (evRec) and are built into
// [plait.StoreEvent] values only when read: a transition costs a small copy
// and the collector little.
type eventLog struct {
	globalCap, runCap int
	seq               uint64
	ring              []evRec
	head              int // index of the oldest event in ring
	n                 int
	// dropped is the seq of the newest event dropped from the ring.
	dropped uint64
	// wake is closed and replaced when an event is appended and a reader
	// waits (waited).
	wake   chan struct{}
	waited bool
}

// evRec is one stored event.
type evRec struct {
	run     *run
	worker  string
	err     string
	seq     uint64
	at      int64 // ns since the Unix epoch
	dur     int64
	epoch   int64
	attempt int32
	task    int32 // index in run.tasks; -1 for a run event
	status  string
}

// runEvents is the stream of one run.
type runEvents struct {
	list    []evRec
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

// appendEventLocked numbers ev and adds it to the store's stream and to
// its run's.
func (s *Store) appendEventLocked(ev evRec) {
	l := &s.ev
	l.initLocked()
	l.seq++
	ev.seq = l.seq
	if l.n < l.globalCap {
		l.ring = append(l.ring, ev)
		l.n++
	} else {
		l.dropped = l.seq - uint64(l.n)
		l.ring[l.head] = ev
		l.head = (l.head + 1) % l.globalCap
	}
	re := &ev.run.events
	if re.list == nil {
		// a run's events: about four per task and two of its own.
		re.list = make([]evRec, 0, min(l.runCap, 2+4*len(ev.run.tasks)))
	}
	if len(re.list) >= l.runCap {
		drop := len(re.list) - l.runCap + 1
		re.dropped = re.list[drop-1].seq
		re.list = append(re.list[:0], re.list[drop:]...)
	}
	re.list = append(re.list, ev)
	if l.waited {
		close(l.wake)
		l.wake = make(chan struct{})
		l.waited = false
	}
}

// taskEventLocked records t's move from status from to its current status.
func (s *Store) taskEventLocked(t *task, from plait.TaskStatus, now time.Time) {
	if from == "" || from == t.status {
		return
	}
	ev := evRec{run: t.run, task: int32(t.idx), status: string(t.status), attempt: int32(t.inst.Attempt),
		epoch: t.epoch, at: now.UnixNano(), worker: t.inst.Worker}
	if from == plait.TaskRunning {
		ev.dur = int64(now.Sub(t.claimedAt))
	}
	switch t.status {
	case plait.TaskFailed, plait.TaskRetrying, plait.TaskDead, plait.TaskCancelled:
		ev.err = t.inst.Error
	}
	s.appendEventLocked(ev)
}

// runEventLocked records r's move to its current status.
func (s *Store) runEventLocked(r *run, now time.Time) {
	s.appendEventLocked(evRec{run: r, task: -1, status: string(r.rec.Status), at: now.UnixNano()})
}

// event builds the event a record stands for.
func (e *evRec) event() plait.StoreEvent {
	r := e.run
	ev := plait.StoreEvent{
		Cursor: plait.EventCursor(strconv.FormatUint(e.seq, 10)), RunID: r.rec.ID, At: time.Unix(0, e.at).UTC(),
		Workflow: r.rec.Workflow, Tenant: r.rec.Tenant, Service: r.rec.Service,
	}
	if e.task < 0 {
		ev.RunStatus = plait.RunStatus(e.status)
		ev.Type = plait.RunEventType(ev.RunStatus)
		return ev
	}
	spec := &r.spec.Tasks[e.task]
	ev.Task, ev.Queue, ev.Priority, ev.Handler = spec.Name, spec.Queue, spec.Priority, spec.Handler
	ev.TaskStatus = plait.TaskStatus(e.status)
	ev.Type = plait.TaskEventType(ev.TaskStatus)
	ev.Attempt, ev.Epoch, ev.Duration, ev.Worker, ev.Error = int(e.attempt), e.epoch, time.Duration(e.dur), e.worker, e.err
	return ev
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
	var dropped uint64
	if params.RunID != "" {
		r := s.runs[params.RunID]
		if r == nil {
			return nil, fmt.Errorf("memstore: run %q: %w", params.RunID, plait.ErrNotFound)
		}
		list := r.events.list
		dropped = r.events.dropped
		i := len(list)
		for i > 0 && list[i-1].seq > after {
			i--
		}
		for k := i; k < len(list) && len(res.Events) < params.Limit; k++ {
			res.Events = append(res.Events, list[k].event())
		}
	} else {
		l := &s.ev
		dropped = l.dropped
		// the ring holds seqs l.seq-n+1 .. l.seq in order from head.
		first := l.seq - uint64(l.n) + 1
		start := uint64(0)
		if after >= first {
			start = after - first + 1
		}
		for k := start; k < uint64(l.n) && len(res.Events) < params.Limit; k++ {
			res.Events = append(res.Events, l.ring[(l.head+int(k))%l.globalCap].event())
		}
	}
	res.FellBehind = params.After != "" && after < dropped
	if len(res.Events) > 0 {
		res.Cursor = res.Events[len(res.Events)-1].Cursor
	}
	return res, nil
}
