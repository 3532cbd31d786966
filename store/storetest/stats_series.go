package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testStatsSeries is the suite of [store.StatsSeriesStore].
func testStatsSeries(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "MinutesCountTheTransitions",
			rule: "each minute of the series counts the tasks that succeeded, failed or died and retried and the runs that completed or failed in it on the store's clock, across minute and hour boundaries, and a minute with none is a point of zeros",
			run: func(t *testing.T, h *Harness, rule string) {
				st := h.Store.(store.StatsSeriesStore)
				// start 90 s before an hour ends
				now := h.Now()
				end := now.Truncate(time.Hour).Add(time.Hour)
				if end.Sub(now) < 90*time.Second {
					end = end.Add(time.Hour)
				}
				h.Advance(end.Sub(now) - 90*time.Second)
				a := h.Now().Truncate(time.Minute)

				// minute a: a run completes, another's task retries
				createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "", rule)
				createRun(t, h, nil)
				res := finish(t, h, store.TaskOutcome{Lease: claimOne(t, h, "a", rule).Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Second})
				require.NoError(t, res.Err, rule)

				// minute a+2, past the hour: the retried task fails, its run fails
				h.Advance(2 * time.Minute)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "no", rule)
				// and a third run's task is claimed, then lost
				createRun(t, h, nil)
				claimOne(t, h, "a", rule)

				// minute a+4: the sweep finds it dead, its run fails
				h.Advance(2 * time.Minute)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 0})
				require.NoError(t, err, rule)
				require.Len(t, sw.Dead, 1, rule)

				got, err := st.StatsSeries(bg, &store.StatsSeriesParams{From: a.Add(-time.Minute + time.Second), To: a.Add(6 * time.Minute)})
				require.NoError(t, err, rule)
				require.Empty(t, got.NextCursor, rule)
				want := make([]store.StatsPoint, 7)
				for i := range want {
					want[i].At = a.Add(time.Duration(i-1) * time.Minute).UTC()
				}
				want[1].TasksSucceeded, want[1].RunsCompleted, want[1].TasksRetried = 1, 1, 1
				want[3].TasksFailed, want[3].RunsFailed = 1, 1
				want[5].TasksFailed, want[5].RunsFailed = 1, 1
				require.Equal(t, want, got.Points, rule)
			},
		},
		{
			name: "PagesOfADay",
			rule: "StatsSeries answers at most a day of minutes per call, and its cursor goes on with the rest, none missing or repeated; a range that is not one is refused",
			run: func(t *testing.T, h *Harness, rule string) {
				st := h.Store.(store.StatsSeriesStore)
				createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "", rule)
				at := h.Now().Truncate(time.Minute)
				p := store.StatsSeriesParams{From: at.Add(-30 * time.Hour), To: at.Add(30 * time.Second)}
				var points []store.StatsPoint
				for calls := 0; ; calls++ {
					require.Less(t, calls, 3, rule)
					res, err := st.StatsSeries(bg, &p)
					require.NoError(t, err, rule)
					require.LessOrEqual(t, len(res.Points), store.StatsSeriesPageMax, rule)
					points = append(points, res.Points...)
					if res.NextCursor == "" {
						break
					}
					p.Cursor = res.NextCursor
				}
				require.Len(t, points, 30*60+1, rule)
				for i, pt := range points {
					sameTime(t, p.From.Add(time.Duration(i)*time.Minute), pt.At, rule)
				}
				last := points[len(points)-1]
				require.Equal(t, int64(1), last.TasksSucceeded, rule)
				require.Equal(t, int64(1), last.RunsCompleted, rule)
				for _, bad := range []store.StatsSeriesParams{{}, {From: at}, {From: at, To: at}, {From: at, To: at.Add(-time.Minute)},
					{From: at, To: at.Add(time.Minute), Cursor: "x"}} {
					_, err := st.StatsSeries(bg, &bad)
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule+": %+v", bad)
				}
			},
		},
	})
}
