package plait

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// RunList lists runs matching params.Filter, newest first, one page per call; pass
// the answered Cursor back for the next page. Their tasks' WaitingFor is
// as [Scheduler.RunGet] answers it (the fleet read once for the page). A Limit of 0 means
// [QueryLimitDefault]. It answers [ErrInvalidArgument] for a bad filter or
// limit and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) RunList(ctx context.Context, params RunListParams) (*RunListResult, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = QueryLimitDefault
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	res, err := qs.RunList(ctx, &params)
	if err != nil {
		return nil, err
	}
	s.explainWaiting(ctx, runTasks(res.Runs)...)
	return res, nil
}

// runTasks lists the tasks of each run, nil runs left out.
func runTasks(runs []*Run) [][]TaskInstance {
	out := make([][]TaskInstance, 0, len(runs))
	for _, r := range runs {
		if r != nil {
			out = append(out, r.Tasks)
		}
	}
	return out
}

// RunGetMany returns the runs of ids in the order given, nil for each id
// with no run, in one round trip, their tasks' WaitingFor as
// [Scheduler.RunGet] answers it (the fleet read once for all). It answers an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) RunGetMany(ctx context.Context, ids ...string) ([]*Run, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if len(ids) > store.GetManyMax {
		return nil, fmt.Errorf("%w: %d ids, want at most %d", ErrInvalidArgument, len(ids), store.GetManyMax)
	}
	res, err := qs.RunGetMany(ctx, &store.RunGetManyParams{IDs: ids})
	if err != nil {
		return nil, err
	}
	s.explainWaiting(ctx, runTasks(res.Runs)...)
	return res.Runs, nil
}

// RunDelete removes a finished run with everything it owns. It answers
// [ErrRunActive] for a run that has not finished (cancel it first),
// [ErrNotFound] for an unknown one, and an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) RunDelete(ctx context.Context, id string) error {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return err
	}
	return qs.RunDelete(ctx, &store.RunDeleteParams{ID: id})
}

// TaskList returns the tasks of run id in the given statuses (every task when
// none is given), in definition order, their WaitingFor as
// [Scheduler.RunGet] answers it. It answers [ErrNotFound] for an
// unknown run and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) TaskList(ctx context.Context, id string, statuses ...TaskStatus) ([]TaskInstance, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	res, err := qs.TaskList(ctx, &store.TaskListParams{RunID: id, Statuses: statuses})
	if err != nil {
		return nil, err
	}
	s.explainWaiting(ctx, res.Tasks)
	return res.Tasks, nil
}

// Run queries, re-exported from package store.
type (
	// RunFilter selects runs: see [store.RunFilter].
	RunFilter = store.RunFilter
	// RunListParams select a page of runs: see [store.RunListParams].
	RunListParams = store.RunListParams
	// RunListResult is a page of runs.
	RunListResult = store.RunListResult
)

// Page sizes of [Scheduler.RunList]: the size given no limit, and the
// largest.
const (
	QueryLimitDefault = store.QueryLimitDefault
	QueryLimitMax     = store.QueryLimitMax
)

// RunGet returns the run's current state with every task.
//
// A ready task's WaitingFor says what holds it back: what the store
// answers (see [TaskInstance.WaitingFor]) or, when it answers nothing,
// what the fleet holds it back by, computed as the run is read and never
// stored: "queue <q> paused" (see [Scheduler.QueuePause]), "queue <q> not
// served" (no live node that is not draining claims from it: a typo in
// [OnQueue], or workers not deployed) or "handler <h>" (none of those
// nodes has the handler). The paused queues and the live nodes are read
// once per call, and only when the answer holds such a task. On a store
// without [store.NodeStore] WaitingFor is the store's alone, and a fleet
// with no live node record (workers that do not heartbeat: see
// [WithNodeHeartbeat]) has only its paused queues named. A fleet that
// cannot be read leaves WaitingFor as the store answered it, with a
// warning to the logger: the run is answered all the same.
func (s *Scheduler) RunGet(ctx context.Context, runID string) (*Run, error) {
	r, err := s.store.RunGet(ctx, &store.RunGetParams{ID: runID})
	if err != nil {
		return nil, err
	}
	s.explainWaiting(ctx, r.Tasks)
	return r, nil
}

// Janitor defaults. README, tests and code cite these names.
const (
	// JanitorIntervalDefault is how often Run prunes the index entries of
	// runs whose retention is over.
	JanitorIntervalDefault = 30 * time.Second
	// JanitorBatch is the most runs one prune call removes.
	JanitorBatch = worker.JanitorBatch
	// JanitorPassMax is the most runs one pass of the janitor removes:
	// the bound on its work per interval. A backlog larger than that is
	// worked off over several intervals.
	JanitorPassMax = worker.JanitorPassMax
)

// WithJanitorInterval sets how often Run prunes the query indexes of runs
// whose retention is over (see [QueryStore.RunPrune]); a pass removes at
// most JanitorPassMax runs. Defaults to JanitorIntervalDefault. Below
// IntervalMin, zero and negative included, is an error. On a store without
// [QueryStore] the janitor does not run.
//
// Every process runs its janitor, with no leader: a prune call is atomic
// per shard and removes each expired entry once, so concurrent janitors
// only share the work, and one process's janitor is enough for all.
//
// On a store with [TaskSearchStore] too, each pass also audits the leases:
// a running task whose lease entry is gone (Redis lost it, or someone
// deleted it), which no sweep can find, gets a lease again for the lease
// duration, so a task whose holder is gone as well is requeued within the
// janitor interval, the lease duration and the sweep interval. A pass
// reads at most 10 000 running tasks and runs. Only the process that holds
// the schedule lease audits (one reader for the fleet); on a store without
// schedules, or with [WithoutScheduleLeader], every process does. The
// bound then counts from the moment a process leads.
func WithJanitorInterval(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithJanitorInterval", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.janitorInterval = d
	}
}

// The records a store keeps of runs, tasks and attempts, re-exported from
// package store, where their fields are documented.
type (
	// Run is one execution of a workflow: see [store.Run].
	Run = store.Run
	// RunStatus is the status of a run: see [store.RunStatus].
	RunStatus = store.RunStatus
	// TaskInstance is one task of a run: see [store.TaskInstance].
	TaskInstance = store.TaskInstance
	// TaskStatus is the status of a task: see [store.TaskStatus].
	TaskStatus = store.TaskStatus
	// Attempt is the record of one attempt of a task: see [store.Attempt].
	Attempt = store.Attempt
	// TaskHistory is the attempts of one task: see [store.TaskHistory].
	TaskHistory = store.TaskHistory
)

// Run statuses.
const (
	RunPending   = store.RunPending
	RunRunning   = store.RunRunning
	RunCompleted = store.RunCompleted
	RunFailed    = store.RunFailed
	RunCancelled = store.RunCancelled
)

// Task statuses; [store.TaskStatus] says what each means.
const (
	TaskPending   = store.TaskPending
	TaskReady     = store.TaskReady
	TaskRunning   = store.TaskRunning
	TaskRetrying  = store.TaskRetrying
	TaskSucceeded = store.TaskSucceeded
	TaskFailed    = store.TaskFailed
	TaskSkipped   = store.TaskSkipped
	TaskCancelled = store.TaskCancelled
	TaskDead      = store.TaskDead
)

// RunHistory answers the attempt history of every task of a run, in
// definition order. It returns an [*UnsupportedError] when the store does
// not implement [HistoryStore], and ErrNotFound for an unknown run.
func (s *Scheduler) RunHistory(ctx context.Context, runID string) ([]TaskHistory, error) {
	h, err := capability[store.HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	res, err := h.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: runID})
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}

// TaskHistory answers the attempt records of one task of a run, oldest
// first. It returns an [*UnsupportedError] when the store does not
// implement [HistoryStore], and ErrNotFound for an unknown run or task.
func (s *Scheduler) TaskHistory(ctx context.Context, runID, task string) ([]Attempt, error) {
	h, err := capability[store.HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	if task == "" {
		return nil, fmt.Errorf("plait: task history needs a task name: %w", ErrInvalidArgument)
	}
	res, err := h.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: runID, Task: task})
	if err != nil {
		return nil, err
	}
	for _, th := range res.Tasks {
		if th.Task == task {
			return th.Attempts, nil
		}
	}
	return nil, fmt.Errorf("plait: run %s task %s: %w", quote(runID), quote(task), ErrNotFound)
}
