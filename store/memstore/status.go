package memstore

import (
	"fmt"
	"time"

	"github.com/plaitdag/plait"
)

// setTaskStatusLocked is the one place a task's status changes. It checks
// the move against plait's status machine before touching anything, then
// writes the status with the times and counters that go with it: the first
// and current claim for running, the end time and the run's counters for a
// terminal status; the limit slots of an attempt that ends. Index
// membership and events join here as they arrive.
// An illegal move changes nothing and returns an error wrapping
// [plait.ErrIllegalTransition].
func (s *Store) setTaskStatusLocked(t *task, to plait.TaskStatus, now time.Time) error {
	if !t.status.CanBecome(to) {
		return fmt.Errorf("memstore: run %s task %s: %w", t.run.rec.ID, t.inst.Name, plait.CheckTaskTransition(t.status, to))
	}
	if t.status == plait.TaskRunning && to != plait.TaskRunning {
		// The attempt ends: its limit slots go back, once.
		s.releaseLimitsLocked(t)
	}
	t.status = to
	r := t.run
	switch to {
	case plait.TaskRunning:
		if t.inst.StartedAt.IsZero() {
			t.inst.StartedAt = now
		}
		t.claimedAt = now
	case plait.TaskSucceeded:
		r.rec.Succeeded++
	case plait.TaskFailed, plait.TaskDead:
		r.rec.Failed++
	case plait.TaskSkipped:
		r.rec.Skipped++
	case plait.TaskCancelled:
		r.rec.Cancelled++
	}
	if to.Terminal() {
		t.inst.EndedAt = now
		r.ended++
	}
	return nil
}

// setRunStatusLocked is the one place a run's status changes, with its
// start or end time and the count of runs per status. A run that ends
// wakes its waiters and starts its retention. The indexes hold no status
// (a query filters on the record), so a move touches none of them. An illegal move changes nothing and returns an error wrapping
// [plait.ErrIllegalTransition].
func (s *Store) setRunStatusLocked(r *run, to plait.RunStatus, now time.Time) error {
	if !r.rec.Status.CanBecome(to) {
		return fmt.Errorf("memstore: run %s: %w", r.rec.ID, plait.CheckRunTransition(r.rec.Status, to))
	}
	if from := r.rec.Status; from != "" {
		if s.counts[from]--; s.counts[from] == 0 {
			delete(s.counts, from)
		}
	}
	s.counts[to]++
	r.rec.Status = to
	switch {
	case to == plait.RunRunning:
		r.rec.StartedAt = now
	case to.Terminal():
		r.rec.EndedAt = now
		close(r.done)
		s.retainLocked(r, now)
	}
	return nil
}
