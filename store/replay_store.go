package store

import (
	"context"
	"errors"
	"fmt"
)

// ReplayStore is the capability of running part of a finished run again:
// a replay. It resets the named tasks (or every failed, dead, cancelled and
// skipped one) and every task below them to pending, and opens a new
// generation of the run, which completes once like the first. The attempt
// history keeps the records of every generation (the epoch keeps growing,
// so no two records share one). A requeue of dead letters is a replay of
// their tasks. Both shipped stores implement it: memstore, and redisstore
// in one script call (run_replay).
type ReplayStore interface {
	// RunReplay opens generation params.Generation+1 of a finished run.
	// Sent again after a lost reply, it opens nothing more and answers
	// the run with Existing set.
	RunReplay(ctx context.Context, params *RunReplayParams) (*RunReplayResult, error)
}

// RunReplayParams are the arguments of [ReplayStore.RunReplay].
type RunReplayParams struct {
	RunID string
	// Generation is the generation the caller replaces: the run's
	// [Run.Generation] as the caller saw it. It makes the call idempotent.
	Generation int64
	// Tasks names the tasks to run again; each must be failed, dead,
	// cancelled or skipped. Empty means every task in one of those
	// statuses.
	Tasks []string
}

// RunReplayResult is the answer of [ReplayStore.RunReplay].
type RunReplayResult struct {
	// Run is the run after the replay, in its new generation.
	Run *Run
	// Reset names the tasks moved back to pending (or on to ready), in
	// definition order: the asked ones and every task below them.
	Reset []string
	// Existing is set when the generation had been opened already by the
	// same call (a retry after a lost reply): nothing changed.
	Existing bool
}

// ErrReplayConflict is the category of [*ReplayError]: a replay was refused
// because the run is not where the caller expected it.
var ErrReplayConflict = errors.New("plait: replay conflict")

// ReplayError says why a replay was refused: the run is still active (a
// generation completes before the next opens), the generation the caller
// expects to replace is not the run's, or a named task is not in a status
// a replay restarts. It matches [ErrReplayConflict].
type ReplayError struct {
	RunID string
	// Generation is the run's generation, Expected the caller's.
	Generation, Expected int64
	// Status is the run's status.
	Status RunStatus
	// Task and TaskStatus name a task that cannot be replayed, if any.
	Task       string
	TaskStatus TaskStatus
}

// Error describes the conflict.
func (e *ReplayError) Error() string {
	switch {
	case e.Task != "":
		return fmt.Sprintf("plait: run %s: task %s is %s, a replay restarts only failed, dead, cancelled or skipped tasks", e.RunID, e.Task, e.TaskStatus)
	case !e.Status.Terminal():
		return fmt.Sprintf("plait: run %s is %s: only a finished run can be replayed", e.RunID, e.Status)
	default:
		return fmt.Sprintf("plait: run %s is at generation %d, the replay expected %d", e.RunID, e.Generation, e.Expected)
	}
}

// Is matches [ErrReplayConflict].
func (e *ReplayError) Is(target error) bool { return target == ErrReplayConflict }
