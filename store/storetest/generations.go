package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// generationCases are the cases of the replay suite that pin the
// generation every event and attempt record carries.
func generationCases() []testCase {
	return []testCase{
		{
			name: "GenerationsAcrossAReplay",
			rule: "every event and attempt record carries the run's generation: 0 up to the first end, 1 from the replay's run_running on, and the attempts of both generations are kept, each labelled",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ReplayStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				require.Equal(t, store.RunFailed, getRun(t, h, r.ID).Status, rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 0})
				require.NoError(t, err, rule)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				succeed(t, h, claimOne(t, h, "b", rule).Lease, "ok", rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)

				if _, ok := h.Store.(store.EventStore); ok {
					for _, stream := range []string{r.ID, ""} {
						evs, _ := readEvents(t, h, stream, "", 100)
						var mine []store.StoreEvent
						for _, e := range evs {
							if e.RunID == r.ID {
								mine = append(mine, e)
							}
						}
						require.Equal(t, []string{
							"run_pending", "task_ready a", "task_running a", "run_running", "task_failed a", "task_skipped b", "run_failed",
							"run_running", "task_pending a", "task_pending b", "task_ready a", "task_running a", "task_succeeded a",
							"task_ready b", "task_running b", "task_succeeded b", "run_completed",
						}, eventTypes(mine), rule)
						for i, e := range mine {
							want := int64(0)
							if i >= 7 {
								want = 1
							}
							require.Equal(t, want, e.Generation, "%s: event %d (%s)", rule, i, e.Type)
						}
					}
				}
				if hs, ok := h.Store.(store.HistoryStore); ok {
					hist, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
					require.NoError(t, err, rule)
					require.Len(t, hist.Tasks, 2, rule)
					a, b := hist.Tasks[0].Attempts, hist.Tasks[1].Attempts
					require.Len(t, a, 2, rule)
					require.Equal(t, []int64{0, 1}, []int64{a[0].Generation, a[1].Generation}, rule)
					require.Equal(t, []int{1, 1}, []int{a[0].Attempt, a[1].Attempt}, rule+": each generation's attempts count from 1")
					require.Equal(t, []string{"failed", "succeeded"}, []string{a[0].Outcome, a[1].Outcome}, rule)
					require.Len(t, b, 1, rule)
					require.Equal(t, int64(1), b[0].Generation, rule)
				}
				run := getRun(t, h, r.ID)
				require.Equal(t, []int64{0, 1}, []int64{run.Task("a").Attempts[0].Generation, run.Task("a").Attempts[1].Generation}, rule)
			},
		},
		{
			name: "SubscribeFollowsTheCurrentGeneration",
			rule: "a Subscription of a replayed run with MinGeneration set to its generation sees the new generation's run_completed, not the old run_failed",
			run: func(t *testing.T, h *Harness, rule string) {
				if _, ok := h.Store.(store.EventStore); !ok {
					t.Skip("the store keeps no events")
				}
				rs := h.Store.(store.ReplayStore)
				s, err := plait.New(h.Store)
				require.NoError(t, err, rule)
				ctx, cancel := context.WithTimeout(bg, time.Minute)
				defer cancel()
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				res, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 0})
				require.NoError(t, err, rule)
				ends := []store.StoreEventType{store.RunEventType(store.RunCompleted), store.RunEventType(store.RunFailed)}

				all, err := s.Subscribe(ctx, &plait.SubscribeFilter{RunID: r.ID, Types: ends})
				require.NoError(t, err, rule)
				ev, err := all.Next(ctx)
				require.NoError(t, err, rule)
				require.Equal(t, store.RunEventType(store.RunFailed), ev.Type, rule+": without the filter the old end comes first")
				require.Zero(t, ev.Generation, rule)

				sub, err := s.Subscribe(ctx, &plait.SubscribeFilter{RunID: r.ID, Types: ends, MinGeneration: res.Run.Generation})
				require.NoError(t, err, rule)
				got := make(chan *store.StoreEvent, 1)
				go func() {
					ev, err := sub.Next(ctx)
					if err != nil {
						ev = nil
					}
					got <- ev
				}()
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				ev = <-got
				require.NotNil(t, ev, rule)
				require.Equal(t, store.RunEventType(store.RunCompleted), ev.Type, rule)
				require.Equal(t, int64(1), ev.Generation, rule)
			},
		},
	}
}
