package plait

import (
	"errors"
	"time"

	"github.com/plaitdag/plait/store"
)

// ErrFellBehind is the category of [*FellBehindError]: a reader of events
// was slower than the stream's cap, and events it had not read were
// dropped.
var ErrFellBehind = errors.New("plait: events dropped before they were read")

// FellBehindError is returned once by [Subscription.Next] when the events
// after the subscription's cursor were partly dropped by the store's cap.
// The next call delivers from the oldest event kept. It matches
// [ErrFellBehind] with errors.Is.
type FellBehindError struct {
	// After is the cursor the subscription had reached.
	After EventCursor
}

// Error says that events were lost to the reader.
func (e *FellBehindError) Error() string {
	return "plait: events after cursor " + string(e.After) + " were dropped by the store's cap before they were read"
}

// Is matches [ErrFellBehind].
func (e *FellBehindError) Is(target error) bool { return target == ErrFellBehind }

// The events a store records, as a [Subscription] answers them,
// re-exported from package store.
type (
	// StoreEvent is one recorded event: see [store.StoreEvent].
	StoreEvent = store.StoreEvent
	// StoreEventType names what a StoreEvent records.
	StoreEventType = store.StoreEventType
	// EventCursor is a position in an event stream.
	EventCursor = store.EventCursor
)

// EventTaskWaiting records that a ready task waits for something no live
// process gives (a handler, a capability, a limit).
const EventTaskWaiting = store.EventTaskWaiting

// RunEventType is the type of the event a run's move to st records.
func RunEventType(st RunStatus) StoreEventType { return store.RunEventType(st) }

// TaskEventType is the type of the event a task's move to st records.
func TaskEventType(st TaskStatus) StoreEventType { return store.TaskEventType(st) }

// EventType names what happened.
type EventType string

// Event types a scheduler reports to observers.
const (
	EventRunSubmitted  EventType = "run_submitted"
	EventRunCancelled  EventType = "run_cancelled"
	EventRunFinished   EventType = "run_finished"
	EventTaskStarted   EventType = "task_started"
	EventTaskSucceeded EventType = "task_succeeded"
	EventTaskRetrying  EventType = "task_retrying"
	EventTaskFailed    EventType = "task_failed"
	EventTaskReleased  EventType = "task_released"
	EventTaskLeaseLost EventType = "task_lease_lost"
	EventLeasesSwept   EventType = "leases_swept"
	// EventRunsPruned: the janitor ended a pass, having pruned Count
	// expired runs from the query indexes.
	EventRunsPruned EventType = "runs_pruned"

	// EventScheduleFired: the leader fired one instant of a schedule
	// (Schedule, Instant, RunID).
	EventScheduleFired EventType = "schedule_fired"
	// EventScheduleSkipped: the leader skipped Count instants of a
	// schedule under its catch-up or overlap policy, the latest being
	// Instant.
	EventScheduleSkipped EventType = "schedule_skipped"
	// EventLeaderAcquired: this process became the schedule leader (Epoch).
	EventLeaderAcquired EventType = "leader_acquired"
	// EventLeaderLost: this process stopped being the schedule leader
	// (Epoch): another took the lease, the store refused a renewal, or it
	// gave the lease up.
	EventLeaderLost EventType = "leader_lost"
	// EventNodeHeartbeat: the store answered this process's node heartbeat
	// (Node).
	EventNodeHeartbeat EventType = "node_heartbeat"
	// EventNodeDraining: this process's node was told to drain (Node): Run
	// takes no more work, finishes what it holds and returns.
	EventNodeDraining EventType = "node_draining"
)

// Event is one thing that happened in this process's scheduler.
type Event struct {
	Type    EventType
	RunID   string
	Task    string
	Attempt int
	Epoch   int64
	// Err is the attempt's error for failures and retries, and for
	// EventTaskReleased of a running attempt the [ErrShutdown] that cut it
	// short (nil when the task went back unstarted).
	Err error
	// RetryIn is the backoff before the next attempt, for EventTaskRetrying.
	RetryIn time.Duration
	// RunStatus is the run's status, for run events and the last task.
	RunStatus RunStatus
	// Count is how many leases a sweep recovered, for EventLeasesSwept,
	// how many runs a janitor pass pruned, for EventRunsPruned, and how
	// many instants were skipped, for EventScheduleSkipped.
	Count int
	// Schedule and Instant name the schedule and the instant, for schedule
	// events.
	Schedule string
	Instant  time.Time
	// Node is this process's node id, for node events, and the holder of
	// the schedule leader lease, for leader events.
	Node string
	// At is the scheduler's clock when the event happened.
	At time.Time
}
