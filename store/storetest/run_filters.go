package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// runFilterCases are the cases of [store.QueryStore] for the filters by
// end time, by workflow with service, by tenant alone and by error text,
// and for counts of any filter: each answer against the brute-force answer
// of RunGet over every run made.
var runFilterCases = []testCase{
	{
		name: "FiltersMatchRunGet",
		rule: "every filter lists exactly the runs whose records (RunGet) match it, by creation or, with an end time, by end, newest first, and counts them per status alike",
		run: func(t *testing.T, h *Harness, rule string) {
			made := filterPopulation(t, h, rule)
			now := h.Now()
			var ended []time.Time
			for _, id := range made {
				if r := getRun(t, h, id); r.Status.Terminal() {
					ended = append(ended, r.EndedAt)
				}
			}
			slices.SortFunc(ended, time.Time.Compare)
			mid := ended[len(ended)/2]
			fails := []store.RunStatus{store.RunFailed}
			for _, f := range []store.RunFilter{
				{},
				{Tenant: "acme"},
				{Tenant: "globex", Statuses: []store.RunStatus{store.RunPending}},
				{Workflow: "report", Service: "billing"},
				{Workflow: "export", Service: "billing", Tenant: "acme"},
				{Workflow: "report", Tenant: "acme"},
				{Workflow: "report", Service: "billing", Statuses: fails},
				{EndedFrom: mid},
				{EndedTo: mid},
				{EndedFrom: mid, Statuses: fails},
				{EndedFrom: now.Add(-time.Hour), Statuses: []store.RunStatus{store.RunFailed, store.RunCancelled}},
				{EndedFrom: ended[0], EndedTo: now.Add(time.Second), Service: "billing", Workflow: "report"},
				{EndedTo: mid, Tenant: "acme", CreatedFrom: ended[0]},
				{ErrorPrefix: "boom"},
				{ErrorPrefix: "boom: disk"},
				{ErrorPrefix: "flaky", Statuses: []store.RunStatus{store.RunCompleted, store.RunRunning, store.RunPending}},
				{ErrorPrefix: "boom", EndedFrom: mid, Tenant: "acme"},
				{ErrorPrefix: "boom", Workflow: "report", Service: "mail"},
				{ErrorPrefix: "nothing like it"},
			} {
				want := bruteForce(t, h, made, &f)
				for _, limit := range []int{1, 3, 100} {
					got := queryAll(t, h, f, limit, rule)
					require.ElementsMatch(t, ids(want), ids(got), "%s: filter %+v, pages of %d", rule, f, limit)
					for i := 1; i < len(got); i++ {
						a, b := got[i-1].CreatedAt, got[i].CreatedAt
						if f.ByEnd() {
							a, b = got[i-1].EndedAt, got[i].EndedAt
						}
						require.False(t, b.After(a), "%s: filter %+v lists newest first", rule, f)
					}
				}
				res, err := h.Store.(store.QueryStore).RunCount(bg, &store.RunCountParams{Filter: f})
				require.NoError(t, err, rule)
				require.False(t, res.Capped, "%s: filter %+v", rule, f)
				require.Equal(t, perStatus(want), nonZero(res.Counts), "%s: count of filter %+v", rule, f)
			}
		},
	},
	{
		name: "EndIndexFollowsReplayAndDelete",
		rule: "a replayed run leaves the end time listing and count of its old status, enters that of its new end, once, within its creation bounds as before; a deleted run leaves them",
		run: func(t *testing.T, h *Harness, rule string) {
			rs, ok := h.Store.(store.ReplayStore)
			if !ok {
				t.Skip("needs ReplayStore")
			}
			q := h.Store.(store.QueryStore)
			from := h.Now()
			r := createRun(t, h, nil)
			failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
			h.Advance(time.Second)
			byEnd := func(st store.RunStatus) []string {
				return ids(queryAll(t, h, store.RunFilter{EndedFrom: from, Statuses: []store.RunStatus{st}}, 10, rule))
			}
			count := func(st store.RunStatus) int64 {
				res, err := q.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{EndedFrom: from, Statuses: []store.RunStatus{st}}})
				require.NoError(t, err, rule)
				return res.Counts[st]
			}
			require.Equal(t, []string{r.ID}, byEnd(store.RunFailed), rule)
			_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
			require.NoError(t, err, rule)
			require.Empty(t, byEnd(store.RunFailed), rule)
			require.Zero(t, count(store.RunFailed), rule)
			require.Empty(t, queryAll(t, h, store.RunFilter{EndedFrom: from}, 10, rule), rule)
			h.Advance(time.Second)
			succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
			again := getRun(t, h, r.ID)
			require.Equal(t, []string{r.ID}, byEnd(store.RunCompleted), rule)
			require.Equal(t, int64(1), count(store.RunCompleted), rule)
			require.Empty(t, byEnd(store.RunFailed), rule)
			require.Empty(t, queryAll(t, h, store.RunFilter{EndedTo: again.EndedAt}, 10, rule), "%s: listed at its last end only", rule)
			// a run replayed keeps its creation time, which bounds it as before
			bounded := store.RunFilter{EndedFrom: from, CreatedFrom: r.CreatedAt, CreatedTo: r.CreatedAt.Add(time.Millisecond)}
			require.Equal(t, []string{r.ID}, ids(queryAll(t, h, bounded, 10, rule)), "%s: by its end within creation bounds", rule)
			require.NoError(t, q.RunDelete(bg, &store.RunDeleteParams{ID: r.ID}), rule)
			require.Empty(t, queryAll(t, h, store.RunFilter{EndedFrom: from}, 10, rule), rule)
			require.Zero(t, count(store.RunCompleted), rule)
		},
	},
	{
		name: "PagingStableWhileRunsEndAndArrive",
		rule: "a listing by end time or by a combined filter lists every run that matched before its first page and still matches once, while runs end and arrive between pages",
		run: func(t *testing.T, h *Harness, rule string) {
			q := h.Store.(store.QueryStore)
			wf := spec(store.StrategyContinue, task("a"))
			wf.Name = "report"
			from := h.Now()
			var done []string
			for i := 0; i < 7; i++ {
				r := createRun(t, h, &runOpts{Workflow: wf, Service: "billing", Tenant: "acme"})
				cancelRun(t, h, r.ID)
				done = append(done, r.ID)
				if i%2 == 1 {
					h.Advance(time.Millisecond) // ends of one millisecond tie
				}
			}
			for _, f := range []store.RunFilter{
				{EndedFrom: from},
				{EndedFrom: from, Statuses: []store.RunStatus{store.RunCancelled}, Workflow: "report", Service: "billing"},
				{Workflow: "report", Service: "billing", Statuses: []store.RunStatus{store.RunCancelled}},
				{Tenant: "acme", Statuses: []store.RunStatus{store.RunCancelled}},
			} {
				seen := map[string]bool{}
				cursor := ""
				for page := 0; ; page++ {
					res, err := q.RunList(bg, &store.RunListParams{Filter: f, Cursor: cursor, Limit: 2})
					require.NoError(t, err, rule)
					for _, r := range res.Runs {
						require.False(t, seen[r.ID], "%s: filter %+v lists %s twice", rule, f, r.ID)
						seen[r.ID] = true
					}
					if res.NextCursor == "" {
						break
					}
					require.Less(t, page, 30, rule)
					cursor = res.NextCursor
					// a new run arrives and ends: newer than every page
					h.Advance(time.Millisecond)
					r := createRun(t, h, &runOpts{Workflow: wf, Service: "billing", Tenant: "acme"})
					cancelRun(t, h, r.ID)
				}
				for _, id := range done {
					require.True(t, seen[id], "%s: filter %+v misses %s", rule, f, id)
				}
			}
		},
	},
	{
		name: "CountCapped",
		rule: "a count that reads runs stops at its limit and says so (Capped, at most the true counts); an indexed count is exact whatever its limit",
		run: func(t *testing.T, h *Harness, rule string) {
			q := h.Store.(store.QueryStore)
			for i := 0; i < 12; i++ {
				createRun(t, h, &runOpts{Service: "svc"})
			}
			pending := []store.RunStatus{store.RunPending}
			bounded := store.RunFilter{Service: "svc", Statuses: pending}
			require.False(t, bounded.CountIndexed(), rule)
			res, err := q.RunCount(bg, &store.RunCountParams{Filter: bounded, Limit: 1})
			require.NoError(t, err, rule)
			require.True(t, res.Capped, rule)
			require.LessOrEqual(t, res.Counts[store.RunPending], int64(11), rule)
			res, err = q.RunCount(bg, &store.RunCountParams{Filter: bounded})
			require.NoError(t, err, rule)
			require.False(t, res.Capped, rule)
			require.Equal(t, int64(12), res.Counts[store.RunPending], rule)
			res, err = q.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{Statuses: pending}, Limit: 1})
			require.NoError(t, err, rule)
			require.False(t, res.Capped, rule)
			require.Equal(t, map[store.RunStatus]int64{store.RunPending: 12}, nonZero(res.Counts), rule)
		},
	},
}

// filterPopulation makes runs of every kind a filter tells apart, the
// clock moving between them: workflows report and export; services
// billing, mail and none; tenants acme, globex and none; pending (their
// task on a queue nobody claims), running, completed, failed with errors
// "boom: disk full" or "boom: timeout", completed after a retry with
// error "flaky", cancelled. It returns their ids.
func filterPopulation(t *testing.T, h *Harness, rule string) []string {
	var made []string
	i := 0
	for _, wfName := range []string{"report", "export"} {
		for _, svc := range []string{"billing", "mail", ""} {
			for _, tenant := range []string{"acme", "globex", ""} {
				for _, fate := range []string{"pending", "running", "completed", "failed", "cancelled", "retried"} {
					i++
					if (i%3 == 0) != (fate == "failed" || fate == "pending") && i%2 == 0 {
						continue // fewer runs, every kind still present
					}
					a := task("a")
					if fate == "pending" {
						a.Queue = "idle"
					}
					wf := spec(store.StrategyContinue, a)
					wf.Name = wfName
					r := createRun(t, h, &runOpts{Workflow: wf, Service: svc, Tenant: tenant})
					made = append(made, r.ID)
					switch fate {
					case "running":
						claimOne(t, h, "a", rule)
					case "completed":
						succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
					case "failed":
						msg := "boom: disk full"
						if i%2 == 0 {
							msg = "boom: timeout"
						}
						failTask(t, h, claimOne(t, h, "a", rule).Lease, msg, rule)
					case "cancelled":
						cancelRun(t, h, r.ID)
					case "retried":
						res := finish(t, h, store.TaskOutcome{Lease: claimOne(t, h, "a", rule).Lease, Outcome: store.OutcomeRetry, Error: "flaky"})
						require.NoError(t, res.Err, rule)
						succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
					}
					h.Advance(time.Millisecond)
				}
			}
		}
	}
	return made
}

// bruteForce answers a filter from RunGet of every run made.
func bruteForce(t *testing.T, h *Harness, made []string, f *store.RunFilter) []*store.Run {
	var out []*store.Run
	in := func(at, from, to time.Time) bool {
		return (from.IsZero() || !at.Before(from)) && (to.IsZero() || at.Before(to))
	}
	for _, id := range made {
		r := getRun(t, h, id)
		if (f.Service != "" && r.Service != f.Service) || (f.Tenant != "" && r.Tenant != f.Tenant) ||
			(f.Workflow != "" && r.Workflow != f.Workflow) ||
			(len(f.Statuses) > 0 && !slices.Contains(f.Statuses, r.Status)) ||
			!in(r.CreatedAt, f.CreatedFrom, f.CreatedTo) ||
			(f.ByEnd() && (!r.Status.Terminal() || !in(r.EndedAt, f.EndedFrom, f.EndedTo))) {
			continue
		}
		if f.ErrorPrefix != "" && !slices.ContainsFunc(r.Tasks, func(ti store.TaskInstance) bool { return strings.HasPrefix(ti.Error, f.ErrorPrefix) }) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func perStatus(runs []*store.Run) map[store.RunStatus]int64 {
	out := map[store.RunStatus]int64{}
	for _, r := range runs {
		out[r.Status]++
	}
	return out
}

func nonZero(m map[store.RunStatus]int64) map[store.RunStatus]int64 {
	out := map[store.RunStatus]int64{}
	for st, n := range m {
		if n != 0 {
			out[st] = n
		}
	}
	return out
}
