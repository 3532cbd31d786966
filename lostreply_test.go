package plait_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

// TestLostClaimReplyIsAskedAgain loses the reply to a worker's first claim
// after Redis ran it, with the client's own retries off: the worker must
// send the claim again under the same RequestID, learn the tasks the first
// call took, and run each once, with no lease left to expire and no crash
// charged.
func TestLostClaimReplyIsAskedAgain(t *testing.T) {
	t.Parallel()
	nf := newNetFault(t, func(_ *netFault, o *redis.Options) { o.MaxRetries = -1 })
	wf := plait.NewWorkflow("lost")
	for _, name := range []string{"a", "b", "c"} {
		wf.Task(name, "step", nil, plait.Retry(0))
	}
	run := submitTo(t, nf.direct, wf)

	var mu sync.Mutex
	calls := map[string]int{}
	w := newWorker(t, nf.through, "asker", plait.WithLeaseDuration(time.Second),
		plait.WithSweepInterval(100*time.Millisecond), plait.WithIdleWait(50*time.Millisecond))
	require.NoError(t, w.s.Handle("step", func(ctx context.Context, task *plait.Task) (any, error) {
		mu.Lock()
		calls[task.Name]++
		mu.Unlock()
		return nil, nil
	}))
	// The function name of a claim ends the same way in every library
	// version; a finish-and-claim's does too, and comes later.
	nf.proxy.DropReplyTo("_claim\r\n")
	w.start(t)
	final := waitRun(t, nf.direct, run.ID)
	require.Equal(t, 1, nf.proxy.Dropped(), "one claim reply must have been lost")
	require.Equal(t, plait.RunCompleted, final.Status)
	mu.Lock()
	defer mu.Unlock()
	for _, ti := range final.Tasks {
		require.Equal(t, 1, calls[ti.Name], "task %s must run once", ti.Name)
		require.Zero(t, ti.Crashes, "task %s must not be charged a crash for a claim whose reply was lost", ti.Name)
		require.Len(t, ti.Attempts, 1, "task %s", ti.Name)
	}
}

// TestOversizeResultFailsOnlyItsTask runs two tasks whose results go to the
// store in one batch; the store refuses one for its size. That task fails
// with ErrResultTooLarge in its record, the other succeeds, and nobody is
// charged a crash.
func TestOversizeResultFailsOnlyItsTask(t *testing.T) {
	t.Parallel()
	store := newMemStore(t, memstore.WithMaxResultBytes(1<<10))
	s, err := plait.New(store)
	require.NoError(t, err)
	gate := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	require.NoError(t, s.Handle("emit", plait.Typed(func(ctx context.Context, task *plait.Task, n int) (string, error) {
		if task.Epoch == 1 {
			entered.Done()
			<-gate // both return together, so their outcomes share a batch
		}
		return strings.Repeat("x", n), nil
	})))
	run, err := s.Submit(context.Background(), plait.NewWorkflow("sizes").
		Task("small", "emit", 10).
		Task("big", "emit", 4<<10))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	entered.Wait()
	close(gate)
	wctx, wcancel := context.WithTimeout(context.Background(), failAfter)
	defer wcancel()
	final, err := s.RunWait(wctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, plait.TaskSucceeded, final.Task("small").Status)
	big := final.Task("big")
	require.Equal(t, plait.TaskFailed, big.Status)
	require.Contains(t, big.Error, plait.ErrResultTooLarge.Error())
	require.Zero(t, big.Crashes)
	require.Len(t, big.Attempts, 1)
	require.Equal(t, "failed", big.Attempts[0].Outcome)
}
