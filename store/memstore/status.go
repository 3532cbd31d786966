package memstore

import (
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// setTaskStatusLocked is the one place a task's status changes. It checks
// the move against plait's status machine before touching anything, then
// writes the status with the times and counters that go with it: the first
// and current claim for running, the end time and the run's counters for a
// terminal status; the limit slots of an attempt that ends; and the event
// and counters of the move (events.go, stats.go). The caller sets the
// task's other fields (error, attempt) before the call, so the event
// carries them; the event of a move to running is made by holdLocked, once
// the claim has set the epoch and the worker. A task created pending makes
// no event. An illegal move changes nothing and returns an error wrapping
// [store.ErrIllegalTransition]. Inside a replay (s.replaying) the moves of
// [store.CheckTaskReplay] are allowed too: a terminal task back to
// pending, its end taken off the run's counters.
func (s *Store) setTaskStatusLocked(t *task, to store.TaskStatus, now time.Time) error {
	if !t.status.CanBecome(to) && (!s.replaying || store.CheckTaskReplay(t.status, to) != nil) {
		return fmt.Errorf("memstore: run %s task %s: %w", t.run.rec.ID, t.inst.Name, store.CheckTaskTransition(t.status, to))
	}
	from := t.status
	r := t.run
	if from.Terminal() {
		// A replay restarts the task: the run's counters are those of the
		// current generation, so its end no longer counts.
		r.ended--
		switch from {
		case store.TaskSucceeded:
			r.rec.Succeeded--
		case store.TaskFailed, store.TaskDead:
			r.rec.Failed--
		case store.TaskSkipped:
			r.rec.Skipped--
		case store.TaskCancelled:
			r.rec.Cancelled--
		}
		t.inst.StartedAt, t.inst.EndedAt = time.Time{}, time.Time{}
		s.admissionCountLocked(t, 1)
	}
	if from == store.TaskRunning && to != store.TaskRunning {
		// The attempt ends: its limit slots go back, once.
		s.releaseLimitsLocked(t)
	}
	t.status = to
	switch to {
	case store.TaskRunning:
		if t.inst.StartedAt.IsZero() {
			t.inst.StartedAt = now
		}
		t.claimedAt = now
	case store.TaskSucceeded:
		r.rec.Succeeded++
	case store.TaskFailed, store.TaskDead:
		r.rec.Failed++
	case store.TaskSkipped:
		r.rec.Skipped++
	case store.TaskCancelled:
		r.rec.Cancelled++
	}
	if to.Terminal() {
		t.inst.EndedAt = now
		r.ended++
		s.admissionCountLocked(t, -1)
	}
	s.statsTaskLocked(t, from, now)
	if to != store.TaskRunning {
		// a claim's event waits for the claim's epoch, attempt and worker:
		// holdLocked makes it.
		s.taskEventLocked(t, from, now)
	}
	return nil
}

// setRunStatusLocked is the one place a run's status changes, with its
// start or end time, the count of runs per status and its event. A run
// created counts for its workflow. A run that ends wakes its waiters,
// starts its retention and enters the end index (a replay leaves it
// stale). The creation indexes hold no status (a query filters on the
// record), so a move touches none of them. An illegal move changes nothing
// and returns an error wrapping
// [store.ErrIllegalTransition]. Inside a replay a finished run may move
// back to running (store.CheckRunReplay): a new generation.
func (s *Store) setRunStatusLocked(r *run, to store.RunStatus, now time.Time) error {
	if !r.rec.Status.CanBecome(to) && (!s.replaying || store.CheckRunReplay(r.rec.Status, to) != nil) {
		return fmt.Errorf("memstore: run %s: %w", r.rec.ID, store.CheckRunTransition(r.rec.Status, to))
	}
	created := r.rec.Status == ""
	if r.rec.Status.Terminal() {
		// A replay opens the next generation: it leaves its retention
		// (while its status still names the list it is in), and ends
		// again later like the first; the waiters of the new
		// generation's end make a fresh channel (RunWait).
		s.unretainLocked(r)
		s.unendLocked()
		r.rec.Generation++
		r.ev = nil // its events from here on carry the new generation
		r.rec.EndedAt = time.Time{}
	}
	s.counts.add(r.rec.Status, -1)
	s.counts.add(to, 1)
	r.rec.Status = to
	if created {
		s.statsRunLocked(r)
	}
	s.runEventLocked(r, now)
	switch {
	case to == store.RunRunning:
		r.rec.StartedAt = now
	case to.Terminal():
		r.rec.EndedAt = now
		s.seriesRunLocked(to, now)
		if r.done != nil {
			close(r.done)
			r.done = nil
		}
		s.retainLocked(r, now)
		s.endLocked(r)
	}
	return nil
}
