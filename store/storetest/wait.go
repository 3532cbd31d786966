package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// watchdog bounds how long a case waits for a call that must return; it is
// a failure deadline, never a condition.
const watchdog = 10 * time.Second

// returned requires that done delivers before the watchdog fires.
func returned[T any](t *testing.T, done <-chan T, rule string) T {
	t.Helper()
	timer := time.NewTimer(watchdog)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
		require.FailNow(t, rule, "call still blocked after %s", watchdog)
	}
	panic("unreachable")
}

// readyWait calls ReadyWait in a goroutine with a long timeout and returns
// the channel its error arrives on.
func readyWait(h *Harness, ctx context.Context, queues []string, timeout time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- h.Store.ReadyWait(ctx, &store.ReadyWaitParams{Queues: queues, Timeout: timeout})
	}()
	return done
}

type runWaitAnswer struct {
	run *store.Run
	err error
}

func runWait(h *Harness, ctx context.Context, id string) <-chan runWaitAnswer {
	done := make(chan runWaitAnswer, 1)
	go func() {
		r, err := h.Store.RunWait(ctx, &store.RunWaitParams{ID: id})
		done <- runWaitAnswer{r, err}
	}()
	return done
}

func testWait(t *testing.T, newHarness func(t *testing.T) *Harness) {
	wakeCases := []struct {
		name  string
		setup func(t *testing.T, h *Harness, rule string) func()
	}{
		{"Create", func(t *testing.T, h *Harness, rule string) func() {
			return func() { createRun(t, h, nil) }
		}},
		{"ChildReleased", func(t *testing.T, h *Harness, rule string) func() {
			createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
			ct := claimOne(t, h, "a", rule)
			return func() { succeed(t, h, ct.Lease, "", rule) }
		}},
		{"Released", func(t *testing.T, h *Harness, rule string) func() {
			createRun(t, h, nil)
			ct := claimOne(t, h, "a", rule)
			return func() {
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReleased}).Err, rule)
			}
		}},
		{"RetryNow", func(t *testing.T, h *Harness, rule string) func() {
			createRun(t, h, nil)
			ct := claimOne(t, h, "a", rule)
			return func() {
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry}).Err, rule)
			}
		}},
		{"Swept", func(t *testing.T, h *Harness, rule string) func() {
			createRun(t, h, nil)
			claimOne(t, h, "a", rule)
			h.Advance(defaultLease + time.Millisecond)
			return func() { require.Len(t, sweep(t, h, 10, 3).Requeued, 1, rule) }
		}},
	}
	var cases []testCase
	for _, w := range wakeCases {
		cases = append(cases, testCase{
			name: "ReadyWaitWakes/" + w.name,
			rule: "ReadyWait must not miss work that becomes ready after an empty claim (" + w.name + ")",
			run: func(t *testing.T, h *Harness, rule string) {
				act := w.setup(t, h, rule)
				claimNone(t, h, rule)
				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				done := readyWait(h, ctx, nil, time.Hour)
				act()
				require.NoError(t, returned(t, done, rule), rule)
				require.Len(t, claim(t, h, nil).Tasks, 1, rule)
			},
		})
	}
	cases = append(cases, []testCase{
		{
			name: "ReadyWaitAtOnce",
			rule: "ReadyWait returns at once when a task is ready on the queues",
			run: func(t *testing.T, h *Harness, rule string) {
				q := task("a")
				q.Queue = "other"
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, q)})
				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				require.NoError(t, returned(t, readyWait(h, ctx, []string{"x", "other"}, time.Hour), rule), rule)
			},
		},
		{
			name: "ReadyWaitDue",
			rule: "ReadyWait returns at once when a delayed task on the queues is due",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Delay = time.Second
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a)})
				claimNone(t, h, rule)
				h.Advance(time.Second)
				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				require.NoError(t, returned(t, readyWait(h, ctx, nil, time.Hour), rule), rule)
				claimOne(t, h, "a", rule)
			},
		},
		{
			name: "ReadyWaitTimeout",
			rule: "ReadyWait returns nil once its Timeout passes",
			run: func(t *testing.T, h *Harness, rule string) {
				require.NoError(t, returned(t, readyWait(h, bg, nil, 20*time.Millisecond), rule), rule)
			},
		},
		{
			name: "ReadyWaitContext",
			rule: "ReadyWait returns nil when its context ends",
			run: func(t *testing.T, h *Harness, rule string) {
				ctx, cancel := context.WithCancel(bg)
				done := readyWait(h, ctx, nil, time.Hour)
				cancel()
				require.NoError(t, returned(t, done, rule), rule)
			},
		},
		{
			name: "RunWaitTerminal",
			rule: "RunWait returns the run once it reaches a terminal status",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				done := runWait(h, bg, r.ID)
				succeed(t, h, ct.Lease, "A", rule)
				ans := returned(t, done, rule)
				require.NoError(t, ans.err, rule)
				require.Equal(t, store.RunCompleted, ans.run.Status, rule)
				require.Equal(t, []byte("A"), ans.run.Task("a").Result, rule)
			},
		},
		{
			name: "RunWaitCancelled",
			rule: "RunWait wakes when the run is cancelled",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				done := runWait(h, bg, r.ID)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID})
				require.NoError(t, err, rule)
				ans := returned(t, done, rule)
				require.NoError(t, ans.err, rule)
				require.Equal(t, store.RunCancelled, ans.run.Status, rule)
			},
		},
		{
			name: "RunWaitFinished",
			rule: "RunWait on a finished run returns it at once",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "x", rule)
				ans := returned(t, runWait(h, bg, r.ID), rule)
				require.NoError(t, ans.err, rule)
				require.Equal(t, store.RunFailed, ans.run.Status, rule)
			},
		},
		{
			name: "RunWaitContext",
			rule: "RunWait returns ctx's error when ctx ends before the run does",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ctx, cancel := context.WithCancel(bg)
				done := runWait(h, ctx, r.ID)
				cancel()
				ans := returned(t, done, rule)
				require.ErrorIs(t, ans.err, context.Canceled, rule)
			},
		},
	}...)
	runCases(t, newHarness, cases)
}
