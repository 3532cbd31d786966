package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// EventStore is the capability of keeping every state change of runs and
// tasks as a stored event: each status transition appends one event, in the
// same atomic step, to a stream of its run and to a stream of the whole
// store, both capped (the caps are options of each store). A reader follows
// either stream from an opaque [EventCursor], so it resumes without gaps
// after a reconnect or a restart, and learns when the cap dropped events it
// had not read yet ([EventReadResult.FellBehind]).
//
// Which changes make an event: a run created (run_pending), started,
// finished or cancelled; a ready task set aside for its handler or held
// back by a limit ([EventTaskWaiting], stores with [ClaimRouter] or
// [Limiter]); a running attempt's progress report ([EventTaskProgress],
// stores with [ProgressStore]); a task made ready, delayed, claimed, retried,
// finished, skipped, cancelled, recovered by the sweep or dead. A task
// created pending and a move between two forms of one status (a pending
// task put in the delayed set) make none, and neither does a step that
// changes nothing: a cancel of a finished run, a sweep that recovered
// nothing.
//
// Every event carries the generation of its run ([StoreEvent].Generation),
// as every attempt record does ([Attempt].Generation): after a replay the
// events of the new generation are told from the old ones, so a reader
// waiting for a run's end does not stop at the end of a generation the
// replay reopened.
type EventStore interface {
	// EventRead returns the events after params.After (or from
	// params.Since), oldest first, at most params.Limit of them. With
	// params.Wait above zero and no event after the cursor, it blocks
	// until one is appended, until Wait passes or until ctx is done, and
	// then answers what it has (possibly nothing, which is not an error).
	// After set to [EventCursorLatest] answers no event kept, only the
	// cursor at the end of the stream, and with Wait the events appended
	// after the call.
	EventRead(ctx context.Context, params *EventReadParams) (*EventReadResult, error)
}

// EventCursor is a position in an event stream: the events after it are the
// ones not read yet. It is opaque, stable across processes sharing a store,
// and meaningful only for the stream it came from (one run's, or the
// store's). The empty cursor is the start of the stream, and
// [EventCursorLatest] its end as it stands at the read.
type EventCursor string

// EventCursorLatest is the cursor of the end of a stream, whatever it holds
// when the read is made: a read after it answers none of the events kept
// and the cursor of that end ([EventReadResult].Cursor, a position like
// any other), and, with Wait, blocks for the events appended after it. A
// reader that wants only what happens from now on starts here. Each
// store resolves it with a bounded read: memstore from its sequence
// number, Redis with one XREVRANGE of one entry per shard.
const EventCursorLatest EventCursor = "$"

// EventReadParams are the arguments of [EventStore.EventRead].
type EventReadParams struct {
	// RunID, when set, reads the stream of that run; empty reads the
	// stream of the whole store.
	RunID string
	// After is the cursor to read after; empty reads from the oldest event
	// kept, and [EventCursorLatest] from the end of the stream.
	After EventCursor
	// Since, when not zero, reads from the first event kept whose At is at
	// or after it (events have the store's clock in ms), and the events
	// after that one in the stream's order. It is a start, as After is:
	// the two cannot be given together. The read answers a cursor as any
	// other, which the next read passes as After; when nothing is at or
	// after Since yet, that cursor is the end of what the stream held. On
	// Redis under the server's clock the read starts at the stream id of
	// Since (stream ids are ms); under a clock of the caller's
	// (WithClock), whose times are not the stream's ids, it reads the
	// stream from its start up to the first event at or after Since: at
	// most the cap per shard.
	Since time.Time
	// Limit is the most events to return; it must be at least 1.
	Limit int
	// Wait is how long to block for a first event when none is after the
	// cursor; zero answers at once.
	Wait time.Duration
}

// Validate reports a read the stores refuse: a limit below 1, a negative
// wait, or two starts at once (an [*EventStartError]). Every error wraps
// [ErrInvalidArgument].
func (p *EventReadParams) Validate() error {
	if p == nil || p.Limit < 1 || p.Wait < 0 {
		return fmt.Errorf("%w: an event read needs a limit >= 1 and a wait >= 0", ErrInvalidArgument)
	}
	if p.After != "" && !p.Since.IsZero() {
		return &EventStartError{Starts: []string{"After", "Since"}}
	}
	return nil
}

// EventStartError reports a read or a subscription given more than one
// place to start (a cursor, the end of the stream, a time): each names a
// different first event, so the caller picks one. It matches
// [ErrInvalidArgument].
type EventStartError struct {
	// Starts names the fields given, as the caller spelled them.
	Starts []string
}

// Error names the starts given.
func (e *EventStartError) Error() string {
	return "plait: events start at one place, got " + strings.Join(e.Starts, ", ")
}

// Is matches [ErrInvalidArgument].
func (e *EventStartError) Is(target error) bool { return target == ErrInvalidArgument }

// EventReadResult is the answer of [EventStore.EventRead].
type EventReadResult struct {
	// Events are the events after the cursor, oldest first.
	Events []StoreEvent
	// Cursor is the position after the last event returned: the After of
	// the next read. It equals the cursor given when no event came back.
	Cursor EventCursor
	// FellBehind reports that the cap dropped events after the cursor
	// given before they were read: Events then starts at the oldest event
	// kept, and some in between are lost to this reader.
	FellBehind bool
}

// StoreEventType names a stored event: "task_" or "run_" followed by the
// status the task or the run moved to, such as "task_running" or
// "run_completed". [TaskEventType] and [RunEventType] build them.
type StoreEventType string

// EventTaskWaiting is the type of the event of a ready task that a claim
// set aside for want of its handler, or that a limit held back: it stays
// ready (TaskStatus), and [StoreEvent].WaitingFor says what it waits for,
// as [TaskInstance.WaitingFor] does. One per time it is set aside or held
// back.
const EventTaskWaiting StoreEventType = "task_waiting"

// TaskEventType is the type of the event of a task moving to st.
func TaskEventType(st TaskStatus) StoreEventType { return StoreEventType("task_" + string(st)) }

// RunEventType is the type of the event of a run moving to st.
func RunEventType(st RunStatus) StoreEventType { return StoreEventType("run_" + string(st)) }

// StoreEvent is one stored state change of a run or a task. Fields that do
// not apply to an event are zero.
type StoreEvent struct {
	// Cursor is the position right after this event in the stream it was
	// read from: resuming from it delivers the next event.
	Cursor EventCursor
	// Type names the change; for a task event TaskStatus is set, for a run
	// event RunStatus.
	Type       StoreEventType
	RunID      string
	Task       string
	TaskStatus TaskStatus
	RunStatus  RunStatus
	// Generation is the run's generation at the change ([Run].Generation:
	// 0 as created, one more per replay). The events of a replayed run
	// carry the new generation from the replay's own run_running on; a
	// reader following the run to its end compares it, so that the end of
	// an earlier generation is not taken for the end of the run. Events
	// written by a store before it kept generations read as 0.
	Generation int64
	// Attempt and Epoch are the task's attempt number and fencing epoch
	// after the change.
	Attempt int
	Epoch   int64
	// At is the store's clock at the change.
	At time.Time
	// Queue, Priority and Handler come from the task's definition.
	Queue    string
	Priority Priority
	Handler  string
	// Duration is how long the attempt ran, for an event that ends a
	// running attempt (a finish, a retry, a release, a crash).
	Duration time.Duration
	// Worker is the worker id holding or last holding the task, and Node
	// that process's node id (see [Attempt]).
	Worker string
	Node   string
	// Workflow, Tenant and Service come from the run.
	Workflow string
	Tenant   string
	Service  string
	// Error is the error recorded with the change, for a failure, a retry,
	// a cancel with a reason, a dead task.
	Error string
	// WaitingFor is what the task waits for, for [EventTaskWaiting].
	WaitingFor string
	// Progress is the report, for [EventTaskProgress]; nil otherwise.
	Progress *TaskProgress
	// Note is the text of an [EventRunNote] event; empty otherwise.
	Note string
}
