package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// rejectingStore answers TaskFinishClaim as a store whose backend refuses a
// whole call for one argument: any batch holding an outcome whose result or
// error is bad is rejected (store.ErrRejected), and nothing applies; with
// all set, every call is. Other batches apply and are kept in applied. The
// other methods are not called.
type rejectingStore struct {
	store.Store
	bad []byte
	all bool

	mu      sync.Mutex
	calls   []string // the tasks of each call, and whether it applied
	applied map[string]store.TaskOutcome
}

func (s *rejectingStore) TaskFinishClaim(_ context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	rejected := s.all
	for _, o := range params.Finish.Outcomes {
		names = append(names, o.Lease.Task)
		if bytes.Equal(o.Result, s.bad) || o.Error == string(s.bad) {
			rejected = true
		}
	}
	call := strings.Join(names, ",")
	if rejected {
		s.calls = append(s.calls, call+" rejected")
		return nil, fmt.Errorf("%w: ERR Protocol error: invalid bulk length", store.ErrRejected)
	}
	s.calls = append(s.calls, call+" applied")
	res := &store.TaskFinishClaimResult{Finished: make([]store.TaskFinishResult, len(params.Finish.Outcomes))}
	for i, o := range params.Finish.Outcomes {
		s.applied[o.Lease.Task] = o
		res.Finished[i].RunStatus = store.RunRunning
	}
	return res, nil
}

// splitEnv is a pool on a rejectingStore, with attempts tracked as claimed.
type splitEnv struct {
	clk    *fakeclock.Clock
	st     *rejectingStore
	p      *pool
	mu     sync.Mutex
	events []string
}

func newSplitEnv(t *testing.T, st *rejectingStore) *splitEnv {
	t.Helper()
	env := &splitEnv{clk: fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), st: st}
	st.applied = map[string]store.TaskOutcome{}
	env.p = newPool(&Config{Store: st, Clock: env.clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NodeID: "node", LeaseDuration: time.Minute, ShutdownTimeout: time.Second,
		Emit: func(e Event) {
			env.mu.Lock()
			defer env.mu.Unlock()
			env.events = append(env.events, string(e.Type)+" "+e.Task)
		}})
	return env
}

// outcome tracks an attempt of task and returns its outcome to write.
func (env *splitEnv) outcome(task string, o store.TaskOutcome) finishReq {
	ct := &store.ClaimedTask{Lease: store.Lease{RunID: "run", Task: task, Epoch: 1}, Spec: store.TaskSpec{Name: task}, Attempt: 1}
	e := &Attempt{ct: ct, pool: env.p, deadline: env.clk.Now().Add(time.Minute)}
	env.p.track(e)
	o.Lease = ct.Lease
	return finishReq{e: e, o: o}
}

// write writes batch and fails the test if the finisher waits to send a
// rejected call again instead of returning.
func (env *splitEnv) write(t *testing.T, batch []finishReq) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.p.fin.write(context.Background(), batch, nil)
	}()
	if env.clk.WaitForTimers(1, done) {
		// Let it give up, so the goroutine ends with the test.
		env.clk.Advance(time.Hour)
		<-done
		t.Fatalf("the finisher waits to send a rejected batch again; calls: %q", env.st.calls)
	}
}

// TestFinisherSplitsRejectedBatch writes 8 outcomes in one batch whose
// sixth the store rejects with the whole call: the other 7 are recorded,
// the sixth's attempt fails with the store's error, and no attempt is left
// waiting on its lease.
func TestFinisherSplitsRejectedBatch(t *testing.T) {
	t.Parallel()
	big := []byte("big result")
	env := newSplitEnv(t, &rejectingStore{bad: big})
	var batch []finishReq
	for i := range 8 {
		o := store.TaskOutcome{Outcome: store.OutcomeSucceeded, Result: []byte("small")}
		if i == 5 {
			o.Result = big
		}
		batch = append(batch, env.outcome(fmt.Sprintf("t%d", i), o))
	}
	env.write(t, batch)
	require.Equal(t, []string{
		"t0,t1,t2,t3,t4,t5,t6,t7 rejected",
		"t0,t1,t2,t3 applied",
		"t4,t5,t6,t7 rejected",
		"t4,t5 rejected",
		"t4 applied",
		"t5 rejected",
		"t6,t7 applied",
	}, env.st.calls, "halves of halves, down to the one outcome")
	require.Len(t, env.st.applied, 7)
	for name, o := range env.st.applied {
		require.Equal(t, store.OutcomeSucceeded, o.Outcome, name)
	}

	// The failure queued in place of the rejected outcome goes next.
	failed := env.p.fin.take(nil, finishBatchMax)
	require.Len(t, failed, 1)
	env.write(t, failed)
	o := env.st.applied["t5"]
	require.Equal(t, store.OutcomeFailed, o.Outcome)
	require.Equal(t, "plait: call rejected by the store: ERR Protocol error: invalid bulk length", o.Error)
	require.Empty(t, o.Result)
	require.Len(t, env.events, 8)
	require.Contains(t, env.events, "task_failed t5")
	require.NotContains(t, strings.Join(env.events, ";"), "lease_lost")
	require.Empty(t, env.p.snapshot(), "every attempt is settled")
	require.False(t, env.p.fin.pending())
}

// TestFinisherRejectedReleaseIsRetried rejects a batch of a big success and
// a release: the release, which carries nothing of the handler's, is sent
// on its own and applies; the success fails.
func TestFinisherRejectedReleaseIsRetried(t *testing.T) {
	t.Parallel()
	big := []byte("big")
	env := newSplitEnv(t, &rejectingStore{bad: big})
	env.write(t, []finishReq{
		env.outcome("big", store.TaskOutcome{Outcome: store.OutcomeSucceeded, Result: big}),
		env.outcome("back", store.TaskOutcome{Outcome: store.OutcomeReturned}),
		env.outcome("err", store.TaskOutcome{Outcome: store.OutcomeRetry, Error: "boom", RetryDelay: time.Second}),
	})
	require.Equal(t, []string{"big,back,err rejected", "big rejected", "err applied", "back applied"}, env.st.calls)
	env.write(t, env.p.fin.take(nil, finishBatchMax))
	require.Equal(t, store.OutcomeFailed, env.st.applied["big"].Outcome)
	require.Equal(t, store.OutcomeRetry, env.st.applied["err"].Outcome)
}

// TestFinisherRejectionOfEverything is a store that rejects every call,
// whatever it carries: each outcome is tried alone and a failure queued in
// its place, but the failures, rejected in their turn, are not replaced
// again: they are retried as any failed call is, while the leases hold,
// and nothing is recorded.
func TestFinisherRejectionOfEverything(t *testing.T) {
	t.Parallel()
	env := newSplitEnv(t, &rejectingStore{all: true})
	env.write(t, []finishReq{
		env.outcome("a", store.TaskOutcome{Outcome: store.OutcomeSucceeded, Result: []byte("a")}),
		env.outcome("b", store.TaskOutcome{Outcome: store.OutcomeSucceeded, Result: []byte("b")}),
	})
	standIns := env.p.fin.take(nil, finishBatchMax)
	require.Len(t, standIns, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.p.fin.write(context.Background(), standIns, nil)
	}()
	require.True(t, env.clk.WaitForTimers(1, done), "the stand-ins are retried, not split")
	for {
		env.clk.Advance(time.Second)
		select {
		case <-done:
			require.Empty(t, env.st.applied)
			require.Empty(t, env.p.snapshot(), "given up: the leases expire and the tasks run again")
			require.False(t, env.p.fin.pending())
			return
		default:
			env.clk.WaitForTimers(1, done)
		}
	}
}
