package memstore

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// statusFixture builds a store holding one run of one task, with the run and
// the task set to the given statuses by hand, as a record in that state.
func statusFixture(t *testing.T, rs store.RunStatus, ts store.TaskStatus) (*Store, *run, *task) {
	t.Helper()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestStore(t, WithClock(clk))
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	r, err := newRun(&store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	r.rec.ID = "1"
	r.rec.Status = rs
	r.tasks[0].status = ts
	return s, r, &r.tasks[0]
}

// Every pair the status machine does not list is refused, and leaves the
// task as it was; every pair it lists is taken.
func TestTaskTransitionsFollowTheTable(t *testing.T) {
	t.Parallel()
	from := append([]store.TaskStatus{""}, store.TaskStatuses()...)
	illegal := 0
	for _, f := range from {
		for _, to := range store.TaskStatuses() {
			s, r, tk := statusFixture(t, store.RunRunning, f)
			before := r.rec
			err := s.setTaskStatusLocked(tk, to, s.clock.Now())
			if f.CanBecome(to) {
				require.NoError(t, err, "%q -> %q is in the table", f, to)
				require.Equal(t, to, tk.status)
				continue
			}
			illegal++
			require.ErrorIs(t, err, store.ErrIllegalTransition, "%q -> %q is not in the table", f, to)
			var te *store.TransitionError
			require.True(t, errors.As(err, &te))
			require.Equal(t, string(f), te.From)
			require.Equal(t, f, tk.status, "a refused move changes nothing")
			require.Equal(t, before, r.rec, "a refused move counts nothing")
		}
	}
	require.Greater(t, illegal, 50)
}

func TestRunTransitionsFollowTheTable(t *testing.T) {
	t.Parallel()
	from := append([]store.RunStatus{""}, store.RunStatuses()...)
	for _, f := range from {
		for _, to := range store.RunStatuses() {
			s, r, _ := statusFixture(t, f, store.TaskPending)
			err := s.setRunStatusLocked(r, to, s.clock.Now())
			if f.CanBecome(to) {
				require.NoError(t, err, "%q -> %q is in the table", f, to)
				require.Equal(t, to, r.rec.Status)
				continue
			}
			require.ErrorIs(t, err, store.ErrIllegalTransition, "%q -> %q is not in the table", f, to)
			require.Equal(t, f, r.rec.Status, "a refused move changes nothing")
			require.True(t, r.rec.EndedAt.IsZero())
		}
	}
}

// A stale finish of a task that is not running is refused before anything
// is written, and the cancel of a finished run changes nothing.
func TestFinishOfATaskNotRunningIsRefused(t *testing.T) {
	t.Parallel()
	s, r, tk := statusFixture(t, store.RunRunning, store.TaskSucceeded)
	s.runs[r.rec.ID] = r
	tk.epoch = 1
	res := s.finishLocked(&store.TaskOutcome{Lease: store.Lease{RunID: "1", Task: "a", Epoch: 1}, Outcome: store.OutcomeSucceeded}, s.clock.Now())
	require.Error(t, res.Err)
	require.Equal(t, store.TaskSucceeded, tk.status)
	require.Empty(t, tk.inst.Attempts)
}

// The replay moves (out of a terminal status) are taken only while a
// replay holds the lock; outside one, and for every other pair, the table
// of Next alone decides.
func TestReplayMovesOnlyInsideAReplay(t *testing.T) {
	t.Parallel()
	from := append([]store.TaskStatus{""}, store.TaskStatuses()...)
	replayMoves := 0
	for _, replaying := range []bool{false, true} {
		for _, f := range from {
			for _, to := range store.TaskStatuses() {
				s, _, tk := statusFixture(t, store.RunRunning, f)
				s.replaying = replaying
				err := s.setTaskStatusLocked(tk, to, s.clock.Now())
				viaReplay := replaying && store.CheckTaskReplay(f, to) == nil
				if f.CanBecome(to) || viaReplay {
					require.NoError(t, err, "%q -> %q (replaying %v)", f, to, replaying)
					require.Equal(t, to, tk.status)
					if viaReplay {
						replayMoves++
					}
					continue
				}
				require.ErrorIs(t, err, store.ErrIllegalTransition, "%q -> %q (replaying %v)", f, to, replaying)
				require.Equal(t, f, tk.status)
			}
		}
		for _, f := range append([]store.RunStatus{""}, store.RunStatuses()...) {
			for _, to := range store.RunStatuses() {
				s, r, _ := statusFixture(t, f, store.TaskPending)
				s.replaying = replaying
				err := s.setRunStatusLocked(r, to, s.clock.Now())
				viaReplay := replaying && store.CheckRunReplay(f, to) == nil
				if f.CanBecome(to) || viaReplay {
					require.NoError(t, err, "%q -> %q (replaying %v)", f, to, replaying)
					require.Equal(t, to, r.rec.Status)
					if viaReplay {
						require.Equal(t, int64(1), r.rec.Generation, "a replayed run opens a generation")
						replayMoves++
					}
					continue
				}
				require.ErrorIs(t, err, store.ErrIllegalTransition, "%q -> %q (replaying %v)", f, to, replaying)
				require.Equal(t, f, r.rec.Status)
				require.Zero(t, r.rec.Generation)
			}
		}
	}
	require.Equal(t, 5+3, replayMoves, "every terminal task to pending, every terminal run to running")
}
