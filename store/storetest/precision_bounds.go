package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// floorMs cuts t down to the millisecond, in UTC.
func floorMs(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// roundUp rounds t up to the millisecond, in UTC.
func roundUp(t time.Time) time.Time {
	f := floorMs(t)
	if f.Before(t) {
		f = f.Add(time.Millisecond)
	}
	return f
}

// sameMs requires two times to be the same instant.
func sameMs(t *testing.T, want, got time.Time, rule, what string) {
	t.Helper()
	require.Truef(t, want.Equal(got), "%s: %s (want %s, got %s)", rule, what, want.UTC().Format(time.RFC3339Nano), got.UTC().Format(time.RFC3339Nano))
}

// testDueTimesRoundUp gives a run-at time, a delay, a lease, a retry delay,
// a node TTL and a leader TTL a nanosecond past the millisecond, on a clock
// off the grid: each due time and deadline the store answers is its now
// (cut to the millisecond) plus the duration rounded up, or the run-at time
// rounded up.
func testDueTimesRoundUp(t *testing.T, h *Harness, rule string) {
	offGrid(h, time.Millisecond)
	late := task("late")
	late.RunAt = h.Now().Add(time.Minute)
	delayed := task("delayed")
	delayed.Delay = time.Second + 1
	r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), late, delayed)})
	sameMs(t, floorMs(h.Now()), r.CreatedAt, rule, "CreatedAt is the clock cut to the millisecond")

	lease := defaultLease + 1
	res := claim(t, h, &claimOpts{Lease: lease})
	require.Len(t, res.Tasks, 1, rule)
	a := res.Tasks[0]
	sameMs(t, floorMs(h.Now()), res.Now, rule, "claim Now")
	sameMs(t, res.Now.Add(defaultLease+time.Millisecond), a.LeaseUntil, rule, "LeaseUntil")
	sameMs(t, r.CreatedAt.Add(time.Second+time.Millisecond), res.NextDueAt, rule, "NextDueAt of a delay")

	offGrid(h, time.Millisecond)
	ext, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{a.Lease}, Duration: time.Minute + 1})
	require.NoError(t, err, rule)
	require.NoError(t, ext[0].Err, rule)
	sameMs(t, floorMs(h.Now()).Add(time.Minute+time.Millisecond), ext[0].Until, rule, "LeaseExtend Until")

	offGrid(h, time.Millisecond)
	require.NoError(t, finish(t, h, store.TaskOutcome{Lease: a.Lease, Outcome: store.OutcomeRetry, Error: "x", RetryDelay: time.Second + 1}).Err, rule)
	offGrid(h, 2*time.Second)
	due := claimNames(t, h)
	require.Len(t, due, 2, rule+": a and the delayed task are due")
	for _, ct := range due {
		succeed(t, h, ct.Lease, "ok", rule)
	}
	offGrid(h, time.Minute)
	succeed(t, h, claimOne(t, h, "late", rule).Lease, "ok", rule)
	done := getRun(t, h, r.ID)
	require.Equal(t, store.RunCompleted, done.Status, rule)
	at := done.Task("a").Attempts
	require.Len(t, at, 2, rule)
	sameMs(t, at[0].EndedAt.Add(time.Second+time.Millisecond), at[1].QueuedAt, rule, "QueuedAt after a retry delay")
	sameMs(t, roundUp(late.RunAt), done.Task("late").Attempts[0].QueuedAt, rule, "QueuedAt of a run-at time")
	sameMs(t, r.CreatedAt.Add(time.Second+time.Millisecond), done.Task("delayed").Attempts[0].QueuedAt, rule, "QueuedAt of a delay")

	if ns, ok := h.Store.(store.NodeStore); ok {
		hb, err := ns.NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: nodeInfo("n1"), TTL: nodeTTL + 1, HistoryLimit: 3})
		require.NoError(t, err, rule)
		n := getNode(t, h, "n1", rule)
		sameMs(t, hb.Now, n.HeartbeatAt, rule, "HeartbeatAt")
		sameMs(t, n.HeartbeatAt.Add(nodeTTL+time.Millisecond), n.ExpiresAt, rule, "node ExpiresAt")
	}
	if ss, ok := h.Store.(store.ScheduleStore); ok {
		lead, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: time.Minute + 1})
		require.NoError(t, err, rule)
		sameMs(t, floorMs(h.Now()).Add(time.Minute+time.Millisecond), lead.Lease.Until, rule, "leader lease Until")
	}
}

// testDeadLettersOfOneMillisecond fails two tasks half a millisecond apart
// within one millisecond, the later one first in the list's order.
func testDeadLettersOfOneMillisecond(t *testing.T, h *Harness, rule string) {
	d := capOf[store.DeadLetterStore](t, h, "DeadLetterStore")
	r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
	got := claimNames(t, h)
	require.Len(t, got, 2, rule)
	offGrid(h, time.Millisecond)
	t0 := h.Now()
	failTask(t, h, got["b"].Lease, "boom", rule)
	h.Advance(500 * time.Microsecond)
	failTask(t, h, got["a"].Lease, "boom", rule)

	all := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule)
	require.Equal(t, []string{r.ID + " b", r.ID + " a"}, letterKeys(all.Letters), rule)
	for i, l := range all.Letters {
		if i > 0 {
			require.Falsef(t, all.Letters[i-1].At.Before(l.At), "%s: letters newest first (%s before %s)", rule,
				all.Letters[i-1].At.Format(time.RFC3339Nano), l.At.Format(time.RFC3339Nano))
		}
	}
	for _, l := range all.Letters {
		sameMs(t, floorMs(t0), l.At, rule, "At of letter "+l.Task)
	}
	var paged []string
	p := store.DeadLetterListParams{Limit: 1}
	for i := 0; i < 3; i++ {
		page := listDead(t, d, p, rule)
		paged = append(paged, letterKeys(page.Letters)...)
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	require.Equal(t, letterKeys(all.Letters), paged, rule+": pages of one")
	since := listDead(t, d, store.DeadLetterListParams{Since: t0, Until: t0.Add(time.Millisecond), Limit: 10}, rule)
	require.Equal(t, letterKeys(all.Letters), letterKeys(since.Letters), rule+": Since and Until within the millisecond")
}

// testRunBoundsCutToTheMillisecond creates a run in the millisecond of a
// bound taken just before it, with finer digits than the millisecond.
func testRunBoundsCutToTheMillisecond(t *testing.T, h *Harness, rule string) {
	qs := capOf[store.QueryStore](t, h, "QueryStore")
	offGrid(h, time.Millisecond)
	t0 := h.Now()
	r := createRun(t, h, nil)
	require.Equal(t, []string{r.ID}, ids(queryAll(t, h, store.RunFilter{CreatedFrom: t0}, 10, rule)), rule)
	require.Empty(t, queryAll(t, h, store.RunFilter{CreatedTo: t0}, 10, rule), rule+": a CreatedTo within the run's millisecond leaves it out")
	n, err := qs.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{CreatedFrom: t0}})
	require.NoError(t, err, rule)
	require.Equal(t, int64(1), n.Counts[store.RunPending], rule)
	n, err = qs.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{CreatedTo: t0}})
	require.NoError(t, err, rule)
	require.Zero(t, n.Counts[store.RunPending], rule+": a CreatedTo within the run's millisecond leaves it out")
}
