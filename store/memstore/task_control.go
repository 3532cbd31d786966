package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// TaskControl applies an operator's control to one task under the store's
// lock. See [store.TaskControlStore]. Every move goes through
// setTaskStatusLocked and setRunStatusLocked; the queue entries the task
// leaves behind (ready, delayed) are stale by their sequence number and
// counted for compaction (dropStaleLocked), as a cancel of the run counts
// them.
func (s *Store) TaskControl(ctx context.Context, params *store.TaskControlParams) (*store.TaskControlResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	i, ok := r.find(params.Task)
	if !ok {
		return nil, fmt.Errorf("memstore: run %s task %s: %w", r.rec.ID, ids.Quote(params.Task), store.ErrNotFound)
	}
	t := &r.tasks[i]
	if !controllable(t, params.Action) {
		return nil, &store.TaskControlError{RunID: r.rec.ID, Task: t.inst.Name, Action: params.Action, Status: t.status}
	}
	now := s.now()
	if err := s.controlLocked(t, params.Action, params.Reason, now); err != nil {
		return nil, err
	}
	return &store.TaskControlResult{Run: r.snapshot()}, nil
}

// controllable reports whether action applies to t as it stands: run now
// to a task waiting on a due time (a pending task made due, in the delayed
// heap, or a retrying one), skip to one that has not started its attempt,
// cancel to one that has not finished.
func controllable(t *task, action store.TaskControlAction) bool {
	switch action {
	case store.TaskRunNow:
		return t.status == store.TaskRetrying || (t.status == store.TaskPending && t.scheduled)
	case store.TaskSkip:
		return t.status == store.TaskPending || t.status == store.TaskReady || t.status == store.TaskRetrying
	case store.TaskCancel:
		return !t.status.Terminal()
	}
	return false
}

// controlLocked makes the moves of a control that controllable allowed.
func (s *Store) controlLocked(t *task, action store.TaskControlAction, reason string, now time.Time) error {
	r := t.run
	if action == store.TaskRunNow {
		if err := s.makeReadyLocked(t, now); err != nil {
			return err
		}
		s.noteLastLocked(reason)
		// the entry it waited in, in the delayed heap, is stale now
		s.dropStaleLocked(t)
		return nil
	}
	to := store.TaskSkipped
	if action == store.TaskCancel {
		to = store.TaskCancelled
	}
	queued := t.status == store.TaskReady || t.status == store.TaskRetrying || (t.status == store.TaskPending && t.scheduled)
	if t.status == store.TaskRunning {
		// the attempt loses its lease: its finish and its extends answer
		// ErrStaleEpoch from here on
		t.epoch++
		t.record(now, "cancelled", reason, 0)
		s.unholdLocked(t)
	}
	if reason != "" {
		t.inst.Error = reason
	}
	if err := s.setTaskStatusLocked(t, to, now); err != nil {
		return err
	}
	s.noteLastLocked(reason)
	if queued {
		s.dropStaleLocked(t)
	}
	if err := s.releaseChildrenLocked(t, now); err != nil {
		return err
	}
	if r.rec.Status == store.RunPending && r.ended == len(r.tasks) {
		// A run whose every task ended before any was claimed starts as
		// it ends: pending leads to running or cancelled only.
		if err := s.setRunStatusLocked(r, store.RunRunning, now); err != nil {
			return err
		}
	}
	return s.finishRunLocked(r, now)
}

// noteLastLocked sets the error of the event just recorded (the move of
// the task a control acts on) to the control's reason, when it has one.
func (s *Store) noteLastLocked(reason string) {
	if reason == "" {
		return
	}
	l := &s.ev
	i := l.n - 1
	if l.n == l.cap {
		i = l.head - 1
		if i < 0 {
			i = l.cap - 1
		}
	}
	if i >= 0 {
		l.at(i).note = reason
	}
}
