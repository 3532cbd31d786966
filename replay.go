package plait

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// RunReplay runs the named tasks of a finished run again, with every task
// below them, as a new generation of the run; with no task named it runs
// every failed, dead, cancelled and skipped task again. generation is the
// [Run.Generation] the caller read: a replay sent twice opens one
// generation. It answers the run in its new generation; [Scheduler.RunWait]
// then waits for that generation to end. An active run is refused with a
// [*ReplayError]; a store without the capability answers ErrUnsupported.
func (s *Scheduler) RunReplay(ctx context.Context, runID string, generation int64, tasks ...string) (*Run, error) {
	rs, err := capability[store.ReplayStore](s.store, "ReplayStore")
	if err != nil {
		return nil, err
	}
	if runID == "" {
		return nil, fmt.Errorf("plait: replay needs a run id: %w", ErrInvalidArgument)
	}
	res, err := rs.RunReplay(ctx, &store.RunReplayParams{RunID: runID, Generation: generation, Tasks: tasks})
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}

// DeadLetterRequeue runs the named dead letters of one run again: a
// replay of their tasks (see [Scheduler.RunReplay]) from the run's current
// generation, whose letters it removes. With no task named it requeues
// every failed or dead task of the run (listed or purged). It answers the
// new generation; a run with no such task is left as it is and its
// generation answered.
func (s *Scheduler) DeadLetterRequeue(ctx context.Context, runID string, tasks ...string) (int64, error) {
	rs, err := capability[store.ReplayStore](s.store, "ReplayStore")
	if err != nil {
		return 0, err
	}
	run, err := s.store.RunGet(ctx, &store.RunGetParams{ID: runID})
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
	res, err := rs.RunReplay(ctx, &store.RunReplayParams{RunID: runID, Generation: run.Generation, Tasks: tasks})
	if err != nil {
		return 0, err
	}
	return res.Run.Generation, nil
}
