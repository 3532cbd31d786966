package plait

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// DeadLetterList answers one page of dead letters, newest first. It returns
// an [*UnsupportedError] when the store does not implement
// [DeadLetterStore]; a Limit of 0 takes 100.
func (s *Scheduler) DeadLetterList(ctx context.Context, params DeadLetterListParams) (*DeadLetterListResult, error) {
	d, err := capability[store.DeadLetterStore](s.store, "DeadLetterStore")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = 100
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return d.DeadLetterList(ctx, &params)
}

// DeadLetterDetail is what [Scheduler.DeadLetterGet] answers: the
// task as RunGet has it (its last error, status and every attempt record)
// and the payload it was submitted with.
type DeadLetterDetail struct {
	TaskInstance
	// Payload is the task's encoded payload (decode it with the
	// scheduler's codec); nil when it had none, or when the store does not
	// implement [PayloadStore].
	Payload []byte
}

// DeadLetterGet answers a dead letter's task: its last error, its
// status, every attempt record and its payload. ErrNotFound when the run
// or task is gone, or the task is not dead-lettered. Two store calls: the
// run, then the payload from a store with [PayloadStore].
func (s *Scheduler) DeadLetterGet(ctx context.Context, runID, task string) (*DeadLetterDetail, error) {
	if _, err := capability[store.DeadLetterStore](s.store, "DeadLetterStore"); err != nil {
		return nil, err
	}
	run, err := s.store.RunGet(ctx, &store.RunGetParams{ID: runID})
	if err != nil {
		return nil, err
	}
	ti := run.Task(task)
	if ti == nil || (ti.Status != TaskFailed && ti.Status != TaskDead) {
		return nil, fmt.Errorf("plait: run %s task %s is not dead-lettered: %w", runID, quote(task), ErrNotFound)
	}
	out := &DeadLetterDetail{TaskInstance: *ti}
	if ps, err := capability[store.PayloadStore](s.store, "PayloadStore"); err == nil {
		res, err := ps.TaskPayloads(ctx, &store.TaskPayloadsParams{RunID: runID, Tasks: []string{task}})
		if err != nil {
			return nil, err
		}
		out.Payload = res.Payloads[task]
	}
	return out, nil
}

// DeadLetterPurge removes the named letters from the dead-letter lists
// and answers how many it removed. It returns an [*UnsupportedError] when
// the store does not implement [DeadLetterStore].
func (s *Scheduler) DeadLetterPurge(ctx context.Context, letters ...DeadLetterRef) (int, error) {
	d, err := capability[store.DeadLetterStore](s.store, "DeadLetterStore")
	if err != nil {
		return 0, err
	}
	res, err := d.DeadLetterPurge(ctx, &store.DeadLetterPurgeParams{Letters: letters})
	if err != nil {
		return 0, err
	}
	return res.Purged, nil
}

// Dead letters as a store lists them, re-exported from package store.
type (
	// DeadLetter is one dead task: see [store.DeadLetter].
	DeadLetter = store.DeadLetter
	// DeadLetterRef names one dead letter (run and task).
	DeadLetterRef = store.DeadLetterRef
	// DeadLetterListParams select a page of dead letters.
	DeadLetterListParams = store.DeadLetterListParams
	// DeadLetterListResult is a page of dead letters.
	DeadLetterListResult = store.DeadLetterListResult
)

// DeadLetterGroups answers the dead letters grouped by error: the newest
// params.Window letters matching its filters (those of DeadLetterList),
// after its cursor, grouped by [DeadLetterErrorKey] of their error, the
// largest group first, each with its count, oldest and newest time and its
// newest letter. Truncated (and NextCursor, which groups the next window)
// says the window did not reach every matching letter. A Window of 0
// takes 1000. It returns an [*UnsupportedError] when the store does not
// implement [store.DeadLetterGroupStore].
func (s *Scheduler) DeadLetterGroups(ctx context.Context, params DeadLetterGroupsParams) (*DeadLetterGroupsResult, error) {
	g, err := capability[store.DeadLetterGroupStore](s.store, "DeadLetterGroupStore")
	if err != nil {
		return nil, err
	}
	if params.Window == 0 {
		params.Window = 1000
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return g.DeadLetterGroups(ctx, &params)
}

// DeadLetterErrorKey is the key DeadLetterGroups groups an error by: see
// [store.DeadLetterErrorKey].
func DeadLetterErrorKey(err string) string { return store.DeadLetterErrorKey(err) }

// Dead-letter groups as a store answers them, re-exported from package store.
type (
	// DeadLetterGroupsParams select the window DeadLetterGroups groups.
	DeadLetterGroupsParams = store.DeadLetterGroupsParams
	// DeadLetterGroupsResult is the groups of a window.
	DeadLetterGroupsResult = store.DeadLetterGroupsResult
	// DeadLetterGroup is the letters of one error in a window.
	DeadLetterGroup = store.DeadLetterGroup
)
