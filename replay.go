package plait

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
// their tasks. memstore implements it.
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

// Replayable reports whether a replay restarts a task in status s when it is
// asked for by name or chosen by default: failed, dead, cancelled, skipped.
func (s TaskStatus) Replayable() bool {
	switch s {
	case TaskFailed, TaskDead, TaskCancelled, TaskSkipped:
		return true
	}
	return false
}

// Replay runs the named tasks of a finished run again, with every task
// below them, as a new generation of the run; with no task named it runs
// every failed, dead, cancelled and skipped task again. generation is the
// [Run.Generation] the caller read: a replay sent twice opens one
// generation. It answers the run in its new generation; [Scheduler.Wait]
// then waits for that generation to end. An active run is refused with a
// [*ReplayError]; a store without the capability answers ErrUnsupported.
func (s *Scheduler) Replay(ctx context.Context, runID string, generation int64, tasks ...string) (*Run, error) {
	rs, err := capability[ReplayStore](s.store, "ReplayStore")
	if err != nil {
		return nil, err
	}
	if runID == "" {
		return nil, fmt.Errorf("plait: replay needs a run id: %w", ErrInvalidArgument)
	}
	res, err := rs.RunReplay(ctx, &RunReplayParams{RunID: runID, Generation: generation, Tasks: tasks})
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}

// RequeueDeadLetters runs the named dead letters of one run again: a
// replay of their tasks (see [Scheduler.Replay]) from the run's current
// generation, whose letters it removes. With no task named it requeues
// every failed or dead task of the run (listed or purged). It answers the
// new generation; a run with no such task is left as it is and its
// generation answered.
func (s *Scheduler) RequeueDeadLetters(ctx context.Context, runID string, tasks ...string) (int64, error) {
	rs, err := capability[ReplayStore](s.store, "ReplayStore")
	if err != nil {
		return 0, err
	}
	run, err := s.store.RunGet(ctx, &RunGetParams{ID: runID})
	if err != nil {
		return 0, err
	}
	if len(tasks) == 0 {
		for i := range run.Tasks {
			if st := run.Tasks[i].Status; st == TaskFailed || st == TaskDead {
				tasks = append(tasks, run.Tasks[i].Name)
			}
		}
		if len(tasks) == 0 {
			return run.Generation, nil
		}
	}
	res, err := rs.RunReplay(ctx, &RunReplayParams{RunID: runID, Generation: run.Generation, Tasks: tasks})
	if err != nil {
		return 0, err
	}
	return res.Run.Generation, nil
}
