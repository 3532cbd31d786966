package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// testStats is the suite of [store.StatsStore].
func testStats(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "CountersPerQueue",
			rule: "the counters of a queue follow its tasks: made due, running now, succeeded, failed, dead, retried, crashed",
			run: func(t *testing.T, h *Harness, rule string) {
				st := h.Store.(store.StatsStore)
				wf := spec(store.StrategyContinue, task("ok"), task("retry"), task("fail"), task("crash"))
				createRun(t, h, &runOpts{Workflow: wf})
				got := claimNames(t, h)
				require.Len(t, got, 4, rule)
				res, err := st.StoreStats(bg, &store.StoreStatsParams{})
				require.NoError(t, err, rule)
				require.Equal(t, store.StatCounters{Submitted: 4, Running: 4}, res.Queues[store.DefaultQueue], rule)

				succeed(t, h, got["ok"].Lease, "", rule)
				res2 := finish(t, h, store.TaskOutcome{Lease: got["retry"].Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Second})
				require.NoError(t, res2.Err, rule)
				failTask(t, h, got["fail"].Lease, "no", rule)
				h.Advance(defaultLease + time.Second)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 0})
				require.NoError(t, err, rule)
				require.Len(t, sw.Dead, 1, rule)

				res, err = st.StoreStats(bg, &store.StoreStatsParams{})
				require.NoError(t, err, rule)
				want := store.StatCounters{Submitted: 4, Running: 0, Succeeded: 1, Failed: 1, Dead: 1, Retried: 1, Crashed: 1}
				require.Equal(t, want, res.Queues[store.DefaultQueue], rule)
				w := want
				w.Submitted = 1 // a workflow counts its runs
				require.Equal(t, w, res.Workflows["wf"], rule+": the same counters per workflow")
			},
		},
		{
			name: "DurationPercentiles",
			rule: "each finished attempt's duration on the store's clock joins its task name's window, and the percentiles come from it",
			run: func(t *testing.T, h *Harness, rule string) {
				for i := 1; i <= 100; i++ {
					createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("step"))})
				}
				for i := 1; i <= 100; i++ {
					ct := claim(t, h, &claimOpts{Limit: 1})
					require.Len(t, ct.Tasks, 1, rule)
					h.Advance(time.Duration(i) * time.Millisecond)
					succeed(t, h, ct.Tasks[0].Lease, "", rule)
				}
				s, err := plait.New(h.Store)
				require.NoError(t, err, rule)
				stats, err := s.Stats(bg)
				require.NoError(t, err, rule)
				d := stats.Tasks["step"]
				require.Equal(t, 100, d.Count, rule)
				sameDuration(t, 50*time.Millisecond, d.P50, rule)
				sameDuration(t, 95*time.Millisecond, d.P95, rule)
				sameDuration(t, 99*time.Millisecond, d.P99, rule)
			},
		},
	})
}
