package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// evBlock is how many events one block of the ring holds: the ring grows a
// block at a time, so no append ever copies the events already kept.
const evBlock = 1024

// WithEventCap sets the event cap, which means the same on every store:
// each event stream keeps at least its newest n entries; on Redis an entry
// holds the events of one script call, on memstore one event. memstore
// keeps one stream, and a run's events are read from it, so this caps them
// too; a reader behind the events dropped is told so. The ring grows a
// block at a time up to n events of 80 bytes each, plus about 90 bytes
// for each run (and each generation of a replayed run) and 64 for each
// task it holds events of, and the text of the errors its events carry:
// at the default about 9 MB, at most 24 MB (every event of a run and a
// task of its own), errors aside. It holds no run: a run freed at the end
// of its retention goes, with its payloads and results, while its events
// stay. Defaults to
// [store.EventCapDefault], as on Redis; below 1 or above
// [store.EventCapMax] is an error.
func WithEventCap(n int) Option {
	return func(c *config) {
		if err := store.CheckEventCap(n); err != nil {
			c.reject("WithEventCap", strconv.Itoa(n), err.Error())
			return
		}
		c.eventCap = n
	}
}

// eventLog holds the store's event stream: a ring of the newest cap
// events, each numbered by seq (the cursor is that number in decimal, the
// same for the store's stream and a run's). Events are kept as compact
// records that share the strings of their run and task (evRec), built into
// [store.StoreEvent] values only when read: a transition writes a slot of
// the ring and allocates nothing once the ring is full, past the one small
// record of a run's names and the one of a task's that their events share
// (evRun, evTask). A record never points at its run, which would keep a
// freed run, its payloads and results, for as long as one of its events
// is in the ring. A run keeps no
// list of its own: it remembers the seq of its first event, and a read of
// the run filters the ring from there.
type eventLog struct {
	cap    int
	seq    uint64
	blocks [][]evRec // the ring, evBlock events a block
	head   int       // index of the oldest event in the ring
	n      int
	// dropped is the seq of the newest event dropped from the ring.
	dropped uint64
	// wake is closed and replaced when an event is appended and a reader
	// waits (waited): a transition nobody reads pays one bool test.
	wake   chan struct{}
	waited bool
}

// evRun holds the names of a run that its events answer, shared by them
// (run.ev), and the generation they happened in: 72 bytes and the run's
// id. A replay starts a new one (setRunStatusLocked), so an event carries
// its generation at no cost per event.
type evRun struct {
	id, workflow, tenant, service string
	gen                           int64
}

// evTask holds the names of a task that its events answer, shared by them
// (task.ev), from its spec: 56 bytes. Like evRun it points at neither the
// task nor its run, and a task's events, three at least, pay for it once
// instead of carrying its names each.
type evTask struct {
	name, queue, handler string
	prio                 store.Priority
}

// evRec is one stored event: 80 bytes. Its number is not kept: the ring
// holds consecutive numbers, so a slot's place tells it (eventLog.seqAt).
type evRec struct {
	run *evRun
	// task names the task of a task event; nil for a run event.
	task   *evTask
	worker string // as recorded: the node id when there is one (store.SplitWorker)
	// note is the error, or what a task_waiting event waits for
	// (routing.go, keylimits.go).
	note    string
	at      int64 // ns since the Unix epoch
	dur     int64
	epoch   int64
	attempt int32
	// status is the task's or the run's status after the move
	// (evstatus.go).
	status evStatus
	kind   evKind
}

// evKind tells what a record stands for.
type evKind uint8

const (
	// evTaskMove is a task's move to its status, the zero value.
	evTaskMove evKind = iota
	// evRunMove is a run's move to its status.
	evRunMove
	// evRunNote is a run_note, its text in note (run_note.go).
	evRunNote
	// evWaiting is a task_waiting, what it waits for in note.
	evWaiting
	// evProgress is a task_progress (progress.go).
	evProgress
)

// initLocked makes the wake channel, once (New sets the cap).
func (l *eventLog) initLocked() {
	if l.wake == nil {
		l.wake = make(chan struct{})
	}
}

// at returns the slot of index i of the ring.
func (l *eventLog) at(i int) *evRec { return &l.blocks[i/evBlock][i%evBlock] }

// seqAt is the number of the event k places after the oldest kept: the
// ring holds l.seq-n+1 .. l.seq in order from head.
func (l *eventLog) seqAt(k int) uint64 { return l.seq - uint64(l.n) + 1 + uint64(k) }

// appendEventLocked numbers ev, an event of r, and adds it to the store's
// stream.
func (s *Store) appendEventLocked(r *run, ev evRec) {
	slot := s.nextEventLocked(r)
	ev.run = slot.run
	*slot = ev
}

// nextEventLocked numbers the next event of r and returns its slot in the
// store's stream, cleared but for its run and number, for the caller to
// fill under the same lock: the events of the hot path are written once,
// in place, rather than built and copied.
func (s *Store) nextEventLocked(r *run) *evRec {
	l := &s.ev
	l.initLocked()
	l.seq++
	if r.firstEvent == 0 {
		r.firstEvent = l.seq
	}
	if r.ev == nil {
		r.ev = &evRun{id: r.rec.ID, workflow: r.rec.Workflow, tenant: r.rec.Tenant, service: r.rec.Service, gen: r.rec.Generation}
	}
	var slot *evRec
	if l.n < l.cap {
		if l.n%evBlock == 0 {
			l.blocks = append(l.blocks, make([]evRec, min(evBlock, l.cap-l.n)))
		}
		slot = l.at(l.n)
		l.n++
	} else {
		l.dropped = l.seq - uint64(l.n)
		slot = l.at(l.head)
		l.head++
		if l.head == l.cap {
			l.head = 0
		}
	}
	*slot = evRec{run: r.ev}
	if l.waited {
		close(l.wake)
		l.wake = make(chan struct{})
		l.waited = false
	}
	return slot
}

// taskEvent is the record of an event of t at now, its status current.
func taskEvent(t *task, now time.Time) evRec {
	var ev evRec
	ev.setTask(t, now)
	return ev
}

// setTask fills in the fields of an event of t at now, its status current.
func (ev *evRec) setTask(t *task, now time.Time) {
	if t.ev == nil {
		spec := t.spec()
		t.ev = &evTask{name: spec.Name, queue: spec.Queue, handler: spec.Handler, prio: spec.Priority}
	}
	ev.task = t.ev
	ev.status, ev.attempt, ev.epoch, ev.at, ev.worker = taskEvStatus(t.status), int32(t.inst.Attempt), t.epoch, now.UnixNano(), recorded(t)
}

// taskEventLocked records t's move from status from to its current status.
func (s *Store) taskEventLocked(t *task, from store.TaskStatus, now time.Time) {
	if from == "" || from == t.status {
		return
	}
	ev := s.nextEventLocked(t.run)
	ev.setTask(t, now)
	if from == store.TaskRunning {
		ev.dur = int64(now.Sub(t.claimedAt))
	}
	switch t.status {
	case store.TaskFailed, store.TaskRetrying, store.TaskDead, store.TaskCancelled:
		ev.note = t.inst.Error
	}
}

// waitingEventLocked records that ready task t waits for what reason says.
func (s *Store) waitingEventLocked(t *task, reason string, now time.Time) {
	ev := taskEvent(t, now)
	ev.note, ev.kind = reason, evWaiting
	s.appendEventLocked(t.run, ev)
}

// runEventLocked records r's move to its current status.
func (s *Store) runEventLocked(r *run, now time.Time) {
	ev := s.nextEventLocked(r)
	ev.kind, ev.status, ev.at = evRunMove, runEvStatus(r.rec.Status), now.UnixNano()
}

// event builds the event a record numbered seq stands for.
func (e *evRec) event(seq uint64) store.StoreEvent {
	r := e.run
	ev := store.StoreEvent{
		Cursor: store.EventCursor(strconv.FormatUint(seq, 10)), RunID: r.id, At: time.Unix(0, e.at).UTC(),
		Workflow: r.workflow, Tenant: r.tenant, Service: r.service, Generation: r.gen,
	}
	switch e.kind {
	case evRunNote:
		ev.Type, ev.Note = store.EventRunNote, e.note
		return ev
	case evRunMove:
		ev.RunStatus = e.status.run()
		ev.Type = store.RunEventType(ev.RunStatus)
		return ev
	}
	if n := e.task; n != nil {
		ev.Task, ev.Queue, ev.Priority, ev.Handler = n.name, n.queue, n.prio, n.handler
	}
	ev.TaskStatus = e.status.task()
	ev.Type = store.TaskEventType(ev.TaskStatus)
	ev.Attempt, ev.Epoch = int(e.attempt), e.epoch
	switch e.kind {
	case evWaiting:
		ev.Type, ev.WaitingFor = store.EventTaskWaiting, e.note
	case evProgress:
		ev.Type, ev.Progress = store.EventTaskProgress, e.progressOf()
	default:
		ev.Error, ev.Duration = e.note, time.Duration(e.dur)
	}
	ev.Worker, ev.Node = store.SplitWorker(e.worker)
	return ev
}

// EventRead returns the events after params.After of the store's stream or
// of one run's, or from params.Since. See [store.EventStore].
func (s *Store) EventRead(ctx context.Context, params *store.EventReadParams) (*store.EventReadResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	var after uint64
	if params.After == store.EventCursorLatest || !params.Since.IsZero() {
		// the start resolves to a cursor like any other, read from
		// below: with Wait, the read blocks from there.
		s.mu.Lock()
		after = s.eventStartLocked(params)
		s.mu.Unlock()
		p := *params
		p.After, p.Since = store.EventCursor(strconv.FormatUint(after, 10)), time.Time{}
		params = &p
	} else if params.After != "" {
		n, err := strconv.ParseUint(string(params.After), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("memstore: event cursor %s: %w", ids.Quote(string(params.After)), store.ErrInvalidArgument)
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

// eventStartLocked is the seq a read from params's start reads after: the
// newest for EventCursorLatest; for Since, the one before the oldest event
// kept at or after it, found by a walk of the ring (at most the cap), or
// the newest when there is none.
func (s *Store) eventStartLocked(params *store.EventReadParams) uint64 {
	l := &s.ev
	if params.After == store.EventCursorLatest {
		return l.seq
	}
	since := params.Since.UnixNano()
	for k := 0; k < l.n; k++ {
		i := l.head + k
		if i >= l.cap {
			i -= l.cap
		}
		if l.at(i).at >= since {
			return l.seqAt(k) - 1
		}
	}
	return l.seq
}

func (s *Store) readEventsLocked(params *store.EventReadParams, after uint64) (*store.EventReadResult, error) {
	res := &store.EventReadResult{Cursor: params.After}
	l := &s.ev
	var r *run
	if params.RunID != "" {
		if r = s.runs[params.RunID]; r == nil {
			return nil, fmt.Errorf("memstore: run %s: %w", ids.Quote(params.RunID), store.ErrNotFound)
		}
		// a run's events start at its first; none of it was dropped
		// after the cursor unless it began before the drop point.
		res.FellBehind = params.After != "" && after < l.dropped && r.firstEvent != 0 && r.firstEvent <= l.dropped
		if after == 0 && r.firstEvent > 0 {
			after = r.firstEvent - 1
		}
	} else {
		res.FellBehind = params.After != "" && after < l.dropped
	}
	// the ring holds seqs l.seq-n+1 .. l.seq in order from head.
	first := l.seq - uint64(l.n) + 1
	start := uint64(0)
	if after >= first {
		start = after - first + 1
	}
	for k := start; k < uint64(l.n) && len(res.Events) < params.Limit; k++ {
		i := l.head + int(k)
		if i >= l.cap {
			i -= l.cap
		}
		e := l.at(i)
		if r != nil && e.run != r.ev && (r.rec.Generation == 0 || e.run.id != r.rec.ID) {
			// another run's event (a replayed run's earlier generations
			// have evRuns of their own)
			continue
		}
		res.Events = append(res.Events, e.event(l.seqAt(int(k))))
	}
	if len(res.Events) > 0 {
		res.Cursor = res.Events[len(res.Events)-1].Cursor
	}
	return res, nil
}

// recorded is the worker t's claim was made under: its node id when it
// has one, which holds its worker id too.
func recorded(t *task) string {
	if t.inst.Node != "" {
		return t.inst.Node
	}
	return t.inst.Worker
}
