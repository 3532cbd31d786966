package plait

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// TaskLogStore is the capability of keeping the lines a handler logs
// through [Task.Logger] with the attempt that wrote them, capped per task
// by line count and bytes (store options), readable per task and attempt.
// The lines live with the run and go when it goes (its retention, or a
// delete). Both shipped stores implement it.
type TaskLogStore interface {
	// TaskLogAppend stores lines of the attempt params.Lease names, in
	// order, as long as the task's cap allows; the first line that does not
	// fit and every line after it are counted as dropped, and the count is
	// kept for readers. It answers ErrStaleEpoch, storing nothing, when the
	// task's epoch is no longer the lease's (lines of a stale attempt are
	// never mixed into the current one), and ErrNotFound for an unknown run
	// or task. An append whose (epoch, Seq) the store already has changes
	// nothing and answers what the first one did, so a resend after a lost
	// reply stores no line twice.
	TaskLogAppend(ctx context.Context, params *TaskLogAppendParams) (*TaskLogAppendResult, error)
	// TaskLogRead answers the stored lines of one task, oldest first, of
	// every attempt or of one attempt number. ErrNotFound for an unknown run
	// or task.
	TaskLogRead(ctx context.Context, params *TaskLogReadParams) (*TaskLogReadResult, error)
}

// LogLine is one line a handler logged.
type LogLine struct {
	// Time is when the line was logged, on the clock of the process that
	// ran the handler; kept in whole milliseconds.
	Time time.Time
	// Level is the slog level of the line.
	Level slog.Level
	// Text is the message followed by its attributes as key=value pairs.
	Text string
	// Attempt and Epoch name the attempt that wrote the line; set on read.
	Attempt int
	Epoch   int64
}

// TaskLogAppendParams are the arguments of [TaskLogStore.TaskLogAppend].
type TaskLogAppendParams struct {
	// Lease names the attempt; its epoch must still be the task's.
	Lease Lease
	// Attempt is the attempt number the lines are stored under.
	Attempt int
	// Seq numbers the appends of one attempt from 1; a resend keeps it.
	Seq int
	// Lines are the lines, oldest first.
	Lines []LogLine
}

// TaskLogAppendResult is the answer of [TaskLogStore.TaskLogAppend].
type TaskLogAppendResult struct {
	// Stored counts the lines kept; Dropped those the task's cap refused.
	Stored  int
	Dropped int
}

// TaskLogReadParams are the arguments of [TaskLogStore.TaskLogRead].
type TaskLogReadParams struct {
	RunID string
	Task  string
	// Attempt, when at least 1, keeps only the lines of that attempt
	// number (a crash re-run keeps its number: its lines come too, each
	// with its epoch).
	Attempt int
}

// TaskLogReadResult is the answer of [TaskLogStore.TaskLogRead].
type TaskLogReadResult struct {
	// Lines are the stored lines, in the order they were appended.
	Lines []LogLine
	// Dropped counts the lines of the task (every attempt) that its cap
	// refused: a non-zero count says the log is cut short.
	Dropped int
}

// TaskLogs answers the lines the attempts of one task logged through
// [Task.Logger], of every attempt (attempt 0) or of one attempt number. It
// returns an [*UnsupportedError] when the store does not implement
// [TaskLogStore], and ErrNotFound for an unknown run or task.
func (s *Scheduler) TaskLogs(ctx context.Context, runID, task string, attempt int) (*TaskLogReadResult, error) {
	ls, err := capability[TaskLogStore](s.store, "TaskLogStore")
	if err != nil {
		return nil, err
	}
	if task == "" || attempt < 0 {
		return nil, fmt.Errorf("plait: task logs need a task name and an attempt of 0 or more: %w", ErrInvalidArgument)
	}
	return ls.TaskLogRead(ctx, &TaskLogReadParams{RunID: runID, Task: task, Attempt: attempt})
}

// Bounds of the task log flush interval.
const (
	// TaskLogFlushDefault is how long a line logged through [Task.Logger]
	// waits at most before it is sent to the store, while its attempt runs.
	TaskLogFlushDefault = time.Second
	// TaskLogFlushMax is the longest flush interval WithTaskLogFlush takes.
	TaskLogFlushMax = time.Minute
	// taskLogBufferMax is how many lines an attempt holds unsent; more are
	// dropped (and counted) until the next flush, so a handler that logs
	// faster than the store takes lines cannot grow memory without bound.
	taskLogBufferMax = 10000
)

// WithTaskLogFlush sets how long a line logged through [Task.Logger] waits
// at most before it is sent to a store that implements [TaskLogStore]: the
// lines of an attempt go in one append per interval, never one round trip
// per line, and the rest when the attempt ends, before its outcome is
// written. Defaults to TaskLogFlushDefault; zero, negative and above
// TaskLogFlushMax are errors.
func WithTaskLogFlush(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 || d > TaskLogFlushMax {
			c.reject("WithTaskLogFlush", d.String(), "want more than 0 and at most TaskLogFlushMax ("+TaskLogFlushMax.String()+")")
			return
		}
		c.taskLogFlush = d
	}
}
