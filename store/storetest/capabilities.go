package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testPinger is the suite of [store.Pinger].
func testPinger(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "PingAnswersTheStoreClock",
			rule: "StorePing answers the store's clock and changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				p := h.Store.(store.Pinger)
				r := createRun(t, h, nil)
				h.Advance(1500 * time.Millisecond)
				res, err := p.StorePing(bg, &store.StorePingParams{})
				require.NoError(t, err, rule)
				sameTime(t, h.Now(), res.Now, rule)
				require.Equal(t, store.RunPending, getRun(t, h, r.ID).Status, rule)
			},
		},
	})
}

// testQueueDepther is the suite of [store.QueueDepther].
func testQueueDepther(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "CountsReadyAndDelayed",
			rule: "QueueDepth counts each queue's ready and delayed tasks, in the order asked, without claimed ones, and changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.QueueDepther)
				later := task("later")
				later.Delay = time.Minute
				other := task("other")
				other.Queue = "other"
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c", "a"), later, other)})
				res, err := d.QueueDepth(bg, &store.QueueDepthParams{Queues: []string{"other", store.DefaultQueue, "empty"}})
				require.NoError(t, err, rule)
				require.Equal(t, []store.QueueDepth{
					{Queue: "other", Ready: 1},
					{Queue: store.DefaultQueue, Ready: 2, Delayed: 1},
					{Queue: "empty"},
				}, res.Queues, rule)
				require.Len(t, claim(t, h, &claimOpts{Limit: 1}).Tasks, 1, rule)
				res, err = d.QueueDepth(bg, &store.QueueDepthParams{})
				require.NoError(t, err, rule)
				require.Equal(t, []store.QueueDepth{{Queue: store.DefaultQueue, Ready: 1, Delayed: 1}}, res.Queues, rule)
			},
		},
	})
}
