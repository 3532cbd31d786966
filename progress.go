package plait

import (
	"fmt"

	"github.com/plaitdag/plait/store"
)

// TaskProgress is a progress report as the store keeps it, on
// [TaskInstance].Progress, on each [Attempt].Progress and on the
// [StoreEvent] of a report: see [store.TaskProgress].
type TaskProgress = store.TaskProgress

// EventTaskProgress records a running attempt's progress report
// ([Task.Progress]); the event's Progress holds it.
const EventTaskProgress = store.EventTaskProgress

// Progress reports how far the attempt got: value on a scale of the
// handler's own choosing (a fraction from 0 to 1, a percentage, a count of
// items done; plait never interprets it) and a short note, at most
// [store.TaskProgressNoteMax] bytes, possibly empty.
//
// It never blocks on the store: the attempt keeps only its latest report,
// and the Scheduler stores it at its lease keeper's next round (every
// third of [WithLeaseDuration]), in one store call for every attempt that
// reported since the last round, and before the attempt's outcome when a
// report is still waiting then. However often a handler calls Progress,
// each attempt costs at most one write per round. A stored report is the
// task's [TaskInstance].Progress (as [Scheduler.RunGet] and
// [Scheduler.TaskList] answer it) until a later one replaces it, stays
// with the attempt's record ([Attempt].Progress) and is recorded as an
// [EventTaskProgress] event for [Scheduler.Subscribe].
//
// It answers an error matching [ErrInvalidArgument] for a value that is
// not a finite number or a note that is too long, storing nothing, and nil
// otherwise. On a store that does not implement [store.ProgressStore] the
// report is dropped (the Scheduler says so once, at debug level); so is a
// report made after the attempt ended, and on a Task built by hand, in a
// handler's unit test.
func (t *Task) Progress(value float64, note string) error {
	err := store.CheckProgress(value, note)
	if err == nil && t.exec != nil {
		err = t.exec.Progress(value, note)
	}
	if err != nil {
		return fmt.Errorf("plait: task %s: %w", quote(t.Name), err)
	}
	return nil
}
