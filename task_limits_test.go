package plait_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// TestConcurrencyKeyAcrossProcesses runs six tasks of one customer key
// limited to 2 on two processes of 5 slots each: at most two run at once
// fleet-wide, the others wait visibly, and all complete.
func TestConcurrencyKeyAcrossProcesses(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		clk := fakeclock.New(epoch)
		st := f.new(t, clk)
		var mu sync.Mutex
		running, most := 0, 0
		release := make(chan struct{})
		begun := make(chan struct{}, 6)
		handler := func(ctx context.Context, task *plait.Task) (any, error) {
			begun <- struct{}{}
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			<-release
			mu.Lock()
			running--
			mu.Unlock()
			return nil, nil
		}
		var procs []*bundle
		for i := 0; i < 2; i++ {
			b := routedOn(t, clk, st, fmt.Sprintf("p%d", i), plait.WithConcurrency(5))
			b.handle(t, "charge", handler)
			procs = append(procs, b)
		}
		wf := plait.NewWorkflow("billing")
		for i := 0; i < 6; i++ {
			wf.Task(fmt.Sprintf("t%d", i), "charge", nil, plait.ConcurrencyKey("customer-7", 2))
		}
		run := procs[0].submit(t, wf)
		for _, b := range procs {
			b.start(t)
		}
		for i := 0; i < 2; i++ {
			select {
			case <-begun:
			case <-time.After(failAfter):
				t.Fatal("two tasks did not start")
			}
		}
		for _, b := range procs {
			b.calls.waitIdle(t)
		}
		got, err := procs[0].s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		waiting := 0
		for _, ti := range got.Tasks {
			if ti.WaitingFor == store.WaitingForLimit("customer-7") {
				waiting++
			}
		}
		require.Equal(t, 4, waiting, "the tasks over the limit wait for it, visibly")
		close(release)
		final := procs[0].wait(t, run.ID)
		require.Equal(t, plait.RunCompleted, final.Status)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 2, most, "at most two tasks of the key ran at once")
	})
}

func TestLimitsNeedLimiter(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)}, plait.WithRemoteHandlers())
	require.NoError(t, err)
	_, err = s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil, plait.ConcurrencyKey("k", 1)))
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = plait.New(newMemStore(t), plait.WithQueueLimit("email", 0))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
	s, err = plait.New(newMemStore(t), plait.WithRemoteHandlers(), plait.WithQueueLimit("email", 5))
	require.NoError(t, err)
	run, err := s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil, plait.OnQueue("email")).Task("b", "h", nil))
	require.NoError(t, err)
	require.NotNil(t, run)
	_, err = s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil, plait.RateKey("k", 0, 0)))
	require.ErrorIs(t, err, plait.ErrInvalidTaskOption)
}
