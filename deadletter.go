package plait

import (
	"context"
	"fmt"
)

// DeadLetters answers one page of dead letters, newest first. It returns
// an [*UnsupportedError] when the store does not implement
// [DeadLetterStore]; a Limit of 0 takes 100.
func (s *Scheduler) DeadLetters(ctx context.Context, params DeadLetterListParams) (*DeadLetterListResult, error) {
	d, err := capability[DeadLetterStore](s.store, "DeadLetterStore")
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

// DeadLetterDetail is what [Scheduler.InspectDeadLetter] answers: the
// task as RunGet has it (its last error, status and every attempt record)
// and the payload it was submitted with.
type DeadLetterDetail struct {
	TaskInstance
	// Payload is the task's encoded payload (decode it with the
	// scheduler's codec); nil when it had none, or when the store does not
	// implement [PayloadStore].
	Payload []byte
}

// InspectDeadLetter answers a dead letter's task: its last error, its
// status, every attempt record and its payload. ErrNotFound when the run
// or task is gone, or the task is not dead-lettered. Two store calls: the
// run, then the payload from a store with [PayloadStore].
func (s *Scheduler) InspectDeadLetter(ctx context.Context, runID, task string) (*DeadLetterDetail, error) {
	if _, err := capability[DeadLetterStore](s.store, "DeadLetterStore"); err != nil {
		return nil, err
	}
	run, err := s.store.RunGet(ctx, &RunGetParams{ID: runID})
	if err != nil {
		return nil, err
	}
	ti := run.Task(task)
	if ti == nil || (ti.Status != TaskFailed && ti.Status != TaskDead) {
		return nil, fmt.Errorf("plait: run %s task %s is not dead-lettered: %w", runID, quote(task), ErrNotFound)
	}
	out := &DeadLetterDetail{TaskInstance: *ti}
	if ps, err := capability[PayloadStore](s.store, "PayloadStore"); err == nil {
		res, err := ps.TaskPayloads(ctx, &TaskPayloadsParams{RunID: runID, Tasks: []string{task}})
		if err != nil {
			return nil, err
		}
		out.Payload = res.Payloads[task]
	}
	return out, nil
}

// PurgeDeadLetters removes the named letters from the dead-letter lists
// and answers how many it removed. It returns an [*UnsupportedError] when
// the store does not implement [DeadLetterStore].
func (s *Scheduler) PurgeDeadLetters(ctx context.Context, letters ...DeadLetterRef) (int, error) {
	d, err := capability[DeadLetterStore](s.store, "DeadLetterStore")
	if err != nil {
		return 0, err
	}
	res, err := d.DeadLetterPurge(ctx, &DeadLetterPurgeParams{Letters: letters})
	if err != nil {
		return 0, err
	}
	return res.Purged, nil
}
