package plait_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
)

// lowShare runs 60 urgent and 20 low tasks, all ready before Run starts, on
// one handler slot with nothing claimed ahead, so every claim takes one
// task under saturation, and returns how many of the first 40 tasks
// started were low.
func lowShare(t *testing.T, f storeFactory, opts ...plait.Option) int {
	t.Helper()
	clk := fakeclock.New(epoch)
	b := routedOn(t, clk, f.new(t, clk), "w", append([]plait.Option{plait.WithConcurrency(1), plait.WithPrefetch(0)}, opts...)...)
	var mu sync.Mutex
	var order []string
	b.handle(t, "work", func(ctx context.Context, task *plait.Task) (any, error) {
		mu.Lock()
		order = append(order, task.Name)
		mu.Unlock()
		return nil, nil
	})
	wf := plait.NewWorkflow("flood")
	for i := 0; i < 60; i++ {
		wf.Task("u"+strconv.Itoa(i), "work", nil, plait.WithPriority(plait.PriorityUrgent))
	}
	for i := 0; i < 20; i++ {
		wf.Task("l"+strconv.Itoa(i), "work", nil, plait.WithPriority(plait.PriorityLow))
	}
	run := b.submit(t, wf)
	b.start(t)
	require.Equal(t, plait.RunCompleted, b.wait(t, run.ID).Status)
	mu.Lock()
	defer mu.Unlock()
	low := 0
	for _, name := range order[:40] {
		if name[0] == 'l' {
			low++
		}
	}
	return low
}

// TestWeightedPrioritiesKeepLowPriorityMoving shows both modes with
// numbers: under a flood of urgent work, strict priority starts no low task
// until the urgent ones are gone; the weighted mode gives low work its
// share of the claims all along.
func TestWeightedPrioritiesKeepLowPriorityMoving(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		strict := lowShare(t, f)
		weighted := lowShare(t, f, plait.WithWeightedPriorities(plait.PriorityWeightsDefault))
		even := lowShare(t, f, plait.WithWeightedPriorities(plait.PriorityWeights{Urgent: 1, High: 1, Normal: 1, Low: 1}))
		t.Logf("low-priority share of the first 40 claims: strict %d/40, weighted 8:4:2:1 %d/40, weighted 1:1:1:1 %d/40", strict, weighted, even)
		require.Zero(t, strict, "strict priority starts urgent work first")
		// One pick in 15 (8+4+2+1) is low's; the empty high and normal
		// levels' picks go to urgent.
		require.InDelta(t, 40.0/15, weighted, 1)
		require.InDelta(t, 40.0/4, even, 1)
	})
}

func TestWeightedPrioritiesNeedFairClaimer(t *testing.T) {
	t.Parallel()
	_, err := plait.New(coreOnly{newMemStore(t)}, plait.WithWeightedPriorities(plait.PriorityWeightsDefault))
	require.ErrorIs(t, err, plait.ErrUnsupported)
	require.Contains(t, err.Error(), "FairClaimer")
	_, err = plait.New(newMemStore(t), plait.WithWeightedPriorities(plait.PriorityWeights{Urgent: 0, High: 1, Normal: 1, Low: 1}))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
}
