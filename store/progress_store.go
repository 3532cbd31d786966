package store

import (
	"context"
	"fmt"
	"math"
	"time"
)

// ProgressStore is the capability of keeping the progress a running
// attempt reports (a number and a short note, as a handler's
// Task.Progress gives it) with the task and its attempt, and of recording
// each report as an event ([EventTaskProgress]) in the same atomic step.
//
// Where a report is kept: [TaskInstance.Progress] is the latest report of
// the task, of whichever attempt made it, and stays visible after that
// attempt ends, while the task waits for a retry or is done; the next
// attempt's first report replaces it. Each [Attempt] record keeps the
// last report of its own attempt ([Attempt.Progress]). A replay clears
// TaskInstance.Progress of the tasks it resets (their attempt records keep
// theirs); the tasks it leaves alone keep it. The reports live with the
// run and go when it goes (its retention, or a delete); the attempt
// records kept past their run ([HistoryStore]) keep theirs. Both shipped
// stores implement it.
type ProgressStore interface {
	// TaskProgress stores a batch of reports, each for the attempt its
	// Lease names, and answers one result per report, in order. A report
	// whose lease no longer holds (the task is not running under that
	// epoch: the attempt ended, was swept or the run cancelled) answers
	// ErrStaleEpoch and writes nothing; an unknown run or task answers
	// ErrNotFound. Each report is stored, with its event, or not at all;
	// a batch may mix both. The reports of one call read one task state
	// each and write one field of its run and one event: at most
	// [TaskProgressBatchMax] of them. A resend after a lost reply stores
	// the report again (the latest report wins; its event is recorded
	// twice).
	TaskProgress(ctx context.Context, params *TaskProgressParams) ([]TaskProgressResult, error)
}

// EventTaskProgress is the type of the event of a running attempt's
// progress report: [StoreEvent].Progress holds the report, TaskStatus is
// running. One per report stored.
const EventTaskProgress StoreEventType = "task_progress"

// TaskProgressNoteMax is the longest [ProgressReport].Note accepted, in
// bytes.
const TaskProgressNoteMax = 256

// TaskProgressBatchMax is the most reports one [ProgressStore.TaskProgress]
// call takes.
const TaskProgressBatchMax = 1000

// TaskProgress is one progress report as a store keeps it.
type TaskProgress struct {
	// Value is the handler's own measure of how far it got, on a scale
	// of its choosing: a fraction from 0 to 1, a percentage, a count of
	// items done. plait stores it as given and never interprets it.
	Value float64
	// Note is a short text the handler gave with it, at most
	// [TaskProgressNoteMax] bytes; may be empty.
	Note string
	// Attempt and Epoch name the attempt that made the report.
	Attempt int
	Epoch   int64
	// At is the store's clock when the report was stored, in whole
	// milliseconds: a Scheduler sends a report at most one flush after it
	// was made (see Task.Progress).
	At time.Time
}

// ProgressReport is one report of [TaskProgressParams].
type ProgressReport struct {
	// Lease names the attempt; it must still hold.
	Lease Lease
	// Value is the progress on the handler's own scale (see
	// [TaskProgress].Value); it must be a finite number.
	Value float64
	// Note is a short text, at most [TaskProgressNoteMax] bytes.
	Note string
}

// Validate reports why the report cannot be stored, wrapping
// [ErrInvalidArgument].
func (r *ProgressReport) Validate() error {
	if r.Lease.RunID == "" || r.Lease.Task == "" {
		return fmt.Errorf("store: progress report needs a run id and a task: %w", ErrInvalidArgument)
	}
	return CheckProgress(r.Value, r.Note)
}

// CheckProgress reports why value and note cannot make a progress report,
// wrapping [ErrInvalidArgument]: a value that is not a finite number, a
// note longer than [TaskProgressNoteMax] bytes.
func CheckProgress(value float64, note string) error {
	switch {
	case math.IsNaN(value) || math.IsInf(value, 0):
		return fmt.Errorf("progress value %v is not a finite number: %w", value, ErrInvalidArgument)
	case len(note) > TaskProgressNoteMax:
		return fmt.Errorf("progress note of %d bytes is longer than %d: %w", len(note), TaskProgressNoteMax, ErrInvalidArgument)
	}
	return nil
}

// TaskProgressParams are the arguments of [ProgressStore.TaskProgress].
type TaskProgressParams struct {
	// Reports are the reports to store, at most [TaskProgressBatchMax].
	Reports []ProgressReport
}

// Validate reports why the call cannot be made, wrapping
// [ErrInvalidArgument]: too many reports, or one that is not valid (the
// whole batch is refused then, and nothing is stored).
func (p *TaskProgressParams) Validate() error {
	if p == nil {
		return fmt.Errorf("store: task progress needs params: %w", ErrInvalidArgument)
	}
	if len(p.Reports) > TaskProgressBatchMax {
		return fmt.Errorf("store: %d progress reports in one call, at most %d: %w", len(p.Reports), TaskProgressBatchMax, ErrInvalidArgument)
	}
	for i := range p.Reports {
		if err := p.Reports[i].Validate(); err != nil {
			return fmt.Errorf("report %d: %w", i, err)
		}
	}
	return nil
}

// TaskProgressResult is the answer for one report of
// [ProgressStore.TaskProgress].
type TaskProgressResult struct {
	// Err is nil when the report was stored, ErrStaleEpoch when its lease
	// no longer holds, ErrNotFound when its run or task is unknown.
	Err error
}

// Clone returns a copy of p, or nil for nil: a store hands each reader a
// record of its own.
func (p *TaskProgress) Clone() *TaskProgress {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
