package plait

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// TaskLogRead answers the lines the attempts of one task logged through
// [Task.Logger], of every attempt (attempt 0) or of one attempt number. It
// returns an [*UnsupportedError] when the store does not implement
// [TaskLogStore], and ErrNotFound for an unknown run or task.
func (s *Scheduler) TaskLogRead(ctx context.Context, runID, task string, attempt int) (*TaskLogReadResult, error) {
	ls, err := capability[store.TaskLogStore](s.store, "TaskLogStore")
	if err != nil {
		return nil, err
	}
	if task == "" || attempt < 0 {
		return nil, fmt.Errorf("plait: task logs need a task name and an attempt of 0 or more: %w", ErrInvalidArgument)
	}
	return ls.TaskLogRead(ctx, &store.TaskLogReadParams{RunID: runID, Task: task, Attempt: attempt})
}

// Bounds of the task log flush interval.
const (
	// TaskLogFlushDefault is how long a line logged through [Task.Logger]
	// waits at most before it is sent to the store, while its attempt runs.
	TaskLogFlushDefault = time.Second
	// TaskLogFlushMax is the longest flush interval WithTaskLogFlush takes.
	TaskLogFlushMax = time.Minute
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

// Task logs as a store keeps them, re-exported from package store.
type (
	// LogLine is one line a handler logged: see [store.LogLine].
	LogLine = store.LogLine
	// TaskLogReadResult is the lines of one attempt.
	TaskLogReadResult = store.TaskLogReadResult
)
