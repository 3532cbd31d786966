package store

import (
	"context"
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
