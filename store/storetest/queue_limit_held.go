package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// queueLimitHeld makes one run of three tasks on queue "lim", whose own
// limit admits one at a time, and claims the one it admits: two ready
// tasks are left held back by the limit. It skips the test on a store that
// keeps no limits, or keeps them with one shard only.
func queueLimitHeld(t *testing.T, h *Harness, rule string) {
	t.Helper()
	if _, ok := h.Store.(store.Limiter); !ok {
		t.Skip("the store keeps no limits")
	}
	var tasks []store.TaskSpec
	for _, n := range []string{"a", "b", "c"} {
		ts := task(n)
		ts.Queue = "lim"
		ts.Limits = []store.TaskLimit{{Key: store.QueueLimitKey("lim"), Concurrency: 1}}
		tasks = append(tasks, ts)
	}
	_, err := h.Store.RunCreate(bg, &store.RunCreateParams{Workflow: spec(store.StrategyContinue, tasks...)})
	if errors.Is(err, store.ErrInvalidArgument) {
		t.Skip("the store keeps limits with one shard only")
	}
	require.NoError(t, err, rule)
	require.Len(t, claim(t, h, &claimOpts{Queues: []string{"lim"}, Limit: 10}).Tasks, 1, rule)
}
