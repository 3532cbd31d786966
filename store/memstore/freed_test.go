package memstore

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// perRunEntries counts, by structure, the entries of the store that name or
// hold a run or one of its tasks: once every run is freed, all of them
// should be zero. The event ring counts its events when its record can
// reach a run, since each of them then keeps its run from being collected.
func (s *Store) perRunEntries() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[string]int{
		"runs": len(s.runs), "keys": len(s.keys), "counts": 0,
		"kept": len(s.kept), "keptOrder": len(s.keptOrder),
		"dead": len(s.dead), "memos": len(s.memos), "memoOrder": len(s.memoOrder),
		"indexes": len(s.indexes), "leases": len(s.leases),
		"limits": len(s.limits), "rateWaits": len(s.rateWaits), "rateExpiry": len(s.rateExpiry),
	}
	s.counts.each(func(store.RunStatus, int64) { n["counts"]++ })
	for _, t := range s.held {
		if t != nil {
			n["held"]++
		}
	}
	for _, ix := range s.indexes {
		n["index entries"] += len(ix.runs)
	}
	for _, l := range s.expiry {
		for r := l.head; r != nil; r = r.expireNext {
			n["expiry"]++
		}
	}
	for _, q := range s.queues {
		for i := range q.ready {
			n["ready"] += len(q.ready[i].items) - q.ready[i].head
		}
		for _, f := range q.aside {
			n["aside"] += len(f.items) - f.head
		}
		n["delayed"] += len(q.delayed)
	}
	if reaches(reflect.TypeFor[evRec](), reflect.TypeFor[run](), map[reflect.Type]bool{}) {
		n["events holding a run"] = s.ev.n
	}
	return n
}

// reaches reports whether a value of type from can point at a value of
// type to.
func reaches(from, to reflect.Type, seen map[reflect.Type]bool) bool {
	if from == to {
		return true
	}
	if seen[from] {
		return false
	}
	seen[from] = true
	switch from.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return reaches(from.Elem(), to, seen)
	case reflect.Map:
		return reaches(from.Key(), to, seen) || reaches(from.Elem(), to, seen)
	case reflect.Struct:
		for i := range from.NumField() {
			if reaches(from.Field(i).Type, to, seen) {
				return true
			}
		}
	case reflect.Interface:
		return true
	}
	return false
}

// Once runs of every kind have ended and their retention, history retention
// and claim leases are over, no structure of the store names or holds any
// of them: not the maps, not the lists, not the queues a cancelled task was
// still waiting in (a queue nobody claims from, a far due time, an aside
// FIFO), and not the event ring, whose events of the freed runs still read
// as they were.
func TestFreedRunsLeaveNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestStore(t, WithClock(clk), WithRetention(time.Minute), WithHistoryRetention(2*time.Minute), WithStats(0))
	task := func(name, handler, queue string) store.TaskSpec {
		return store.TaskSpec{Name: name, Handler: handler, Queue: queue}
	}
	create := func(i int, tasks ...store.TaskSpec) string {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf" + strconv.Itoa(i%3), Tasks: tasks},
			Service: "svc", Tenant: "t" + strconv.Itoa(i%4), Key: "k" + strconv.Itoa(i)})
		require.NoError(t, err)
		return res.Run.ID
	}
	claim := func(req string, handlers ...string) []*store.ClaimedTask {
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute,
			RequestID: req, Handlers: handlers})
		require.NoError(t, err)
		return res.Tasks
	}
	finish := func(ct []*store.ClaimedTask, o store.Outcome) {
		for _, c := range ct {
			res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w",
				Outcomes: []store.TaskOutcome{{Lease: c.Lease, Outcome: o, RetryDelay: 24 * time.Hour, Error: "boom"}}})
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
		}
	}
	var cancel []string
	const n = 40
	for i := 0; i < n; i++ {
		create(i, task("a", "h", ""))
	}
	finish(claim("c1"), store.OutcomeSucceeded) // succeeded, their history kept
	for i := n; i < 2*n; i++ {
		create(i, task("a", "h", ""), task("b", "h", ""))
	}
	var fail, retry []*store.ClaimedTask
	for _, c := range claim("c2") {
		if c.Lease.Task == "a" {
			fail = append(fail, c)
		} else {
			retry = append(retry, c)
		}
	}
	require.Len(t, fail, n)
	finish(fail, store.OutcomeFailed) // dead letters
	finish(retry, store.OutcomeRetry) // retrying a day later: in the delayed heap
	for i := 2 * n; i < 3*n; i++ {
		cancel = append(cancel, create(i, task("a", "h", "idle"))) // a queue nobody claims from
	}
	for i := 3 * n; i < 4*n; i++ {
		spec := task("a", "h", "")
		spec.RunAt = clk.Now().Add(24 * time.Hour)
		cancel = append(cancel, create(i, spec)) // due tomorrow
	}
	for i := 4 * n; i < 5*n; i++ {
		cancel = append(cancel, create(i, task("a", "other", ""))) // set aside by a claim for h
	}
	require.Empty(t, claim("c3", "h"))
	for i := n; i < 2*n; i++ {
		cancel = append(cancel, strconv.Itoa(i+1)) // the runs whose task b retries
	}
	// every structure is in use, but those of limits, which no task has,
	// of leases, which no task holds now, and of kept histories, which
	// only freed runs have; and the ring, which is what is checked.
	unused := map[string]bool{"leases": true, "limits": true, "rateWaits": true, "rateExpiry": true,
		"kept": true, "keptOrder": true, "events holding a run": true}
	for k, v := range s.perRunEntries() {
		if !unused[k] {
			require.NotZero(t, v, "%s: the scenario fills every structure", k)
		}
	}
	for _, id := range cancel {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
	}

	prune := func() {
		_, err := s.RunPrune(ctx, &store.RunPruneParams{Limit: 1})
		require.NoError(t, err)
	}
	clk.Advance(90 * time.Second) // the runs are freed, their history kept
	prune()
	kept := s.perRunEntries()
	require.Zero(t, kept["runs"])
	require.Equal(t, 5*n, kept["kept"])
	clk.Advance(90 * time.Second)
	prune()
	left := map[string]int{}
	for k, v := range s.perRunEntries() {
		if v != 0 {
			left[k] = v
		}
	}
	require.Empty(t, left, "entries of freed runs still held")

	evs, err := s.EventRead(ctx, &store.EventReadParams{Limit: 1000})
	require.NoError(t, err)
	require.NotEmpty(t, evs.Events)
	for _, ev := range evs.Events {
		require.NotEmpty(t, ev.RunID)
		require.Equal(t, "svc", ev.Service)
		require.NotEmpty(t, ev.Tenant)
		require.NotEmpty(t, ev.Workflow)
		if ev.Task != "" {
			require.NotEmpty(t, ev.Queue)
			require.NotEmpty(t, ev.Handler)
		}
	}
}

// A map is rebuilt once deletes leave it a quarter of its peak, and a
// slice once it uses a quarter of its array; neither below shrinkMin.
func TestShrunkAndFitted(t *testing.T) {
	t.Parallel()
	m, peak := map[int]int{}, 0
	for i := range 400 {
		m[i] = i
	}
	orig := m
	for i := range 300 {
		delete(m, i)
		if m = shrunk(m, &peak); len(m) > 100 {
			require.Equal(t, 400, peak, "the peak is the size before the first delete")
			require.True(t, reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(orig).UnsafePointer(), "kept while above a quarter")
		}
	}
	require.Len(t, m, 100)
	require.Equal(t, 100, peak, "rebuilt at a quarter: its peak is its size")
	require.False(t, reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(orig).UnsafePointer())
	for i := 300; i < 400; i++ {
		require.Equal(t, i, m[i])
	}

	q := make([]*int, 256)
	for i := range q {
		q[i] = new(int)
	}
	q = dropFront(q, 100)
	require.Len(t, q, 156)
	require.Equal(t, 156, cap(q), "more than a quarter of its room: kept")
	q = dropFront(q, 120)
	require.Len(t, q, 36)
	require.Less(t, cap(q), 64, "a quarter of its room or less: its own array")
	require.Nil(t, dropFront(q, 36), "empty: no array")
	small := make([]int, 2, 40)
	require.Equal(t, 40, cap(fitted(small)), "below shrinkMin: kept")
}
