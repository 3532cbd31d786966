package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testQueries is the suite of [store.QueryStore]: queries, counts, delete
// and the pruning of index entries after retention.
func testQueries(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "GetManyAnswersMissingAsNil",
			rule: "RunGetMany answers the runs in the order asked, nil for each id with no run, in one call",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				a := createRun(t, h, nil)
				b := createRun(t, h, &runOpts{Service: "svc"})
				res, err := q.RunGetMany(bg, &store.RunGetManyParams{IDs: []string{b.ID, "no-such-run", a.ID, a.ID + "0"}})
				require.NoError(t, err, rule)
				require.Len(t, res.Runs, 4, rule)
				require.Equal(t, b.ID, res.Runs[0].ID, rule)
				require.Equal(t, "svc", res.Runs[0].Service, rule)
				require.Nil(t, res.Runs[1], rule)
				require.Equal(t, a.ID, res.Runs[2].ID, rule)
				require.Len(t, res.Runs[2].Tasks, 1, rule)
				require.Nil(t, res.Runs[3], rule)
				res, err = q.RunGetMany(bg, &store.RunGetManyParams{})
				require.NoError(t, err, rule)
				require.Empty(t, res.Runs, rule)
			},
		},
		{
			name: "FiltersSelectByIndex",
			rule: "a query lists exactly the runs of its service, service and tenant, workflow or status, newest first",
			run: func(t *testing.T, h *Harness, rule string) {
				mk := func(wf, svc, tenant string) *store.Run {
					w := spec(store.StrategyContinue, task("a"))
					w.Name = wf
					r := createRun(t, h, &runOpts{Workflow: w, Service: svc, Tenant: tenant})
					h.Advance(time.Millisecond)
					return r
				}
				r1 := mk("report", "billing", "acme")
				r2 := mk("report", "billing", "globex")
				r3 := mk("export", "billing", "")
				r4 := mk("export", "mail", "acme")
				r5 := mk("report", "", "")
				cancelRun(t, h, r2.ID)
				cancelRun(t, h, r4.ID)
				for _, c := range []struct {
					f    store.RunFilter
					want []*store.Run
				}{
					{store.RunFilter{}, []*store.Run{r5, r4, r3, r2, r1}},
					{store.RunFilter{Service: "billing"}, []*store.Run{r3, r2, r1}},
					{store.RunFilter{Service: "billing", Tenant: "acme"}, []*store.Run{r1}},
					{store.RunFilter{Service: "mail", Tenant: "acme"}, []*store.Run{r4}},
					{store.RunFilter{Service: "none"}, nil},
					{store.RunFilter{Workflow: "report"}, []*store.Run{r5, r2, r1}},
					{store.RunFilter{Workflow: "export"}, []*store.Run{r4, r3}},
					{store.RunFilter{Statuses: []store.RunStatus{store.RunCancelled}}, []*store.Run{r4, r2}},
					{store.RunFilter{Statuses: []store.RunStatus{store.RunPending, store.RunFailed}}, []*store.Run{r5, r3, r1}},
					{store.RunFilter{Service: "billing", Statuses: []store.RunStatus{store.RunPending}}, []*store.Run{r3, r1}},
					{store.RunFilter{Workflow: "export", Statuses: []store.RunStatus{store.RunCancelled}}, []*store.Run{r4}},
					{store.RunFilter{CreatedFrom: r2.CreatedAt, CreatedTo: r4.CreatedAt}, []*store.Run{r3, r2}},
					{store.RunFilter{CreatedFrom: r2.CreatedAt, Statuses: []store.RunStatus{store.RunCancelled}}, []*store.Run{r4, r2}},
					{store.RunFilter{CreatedTo: r2.CreatedAt}, []*store.Run{r1}},
				} {
					got := queryAll(t, h, c.f, 2, rule)
					require.Equal(t, ids(c.want), ids(got), "%s: filter %+v", rule, c.f)
				}
				got := queryAll(t, h, store.RunFilter{Service: "billing", Tenant: "acme"}, 10, rule)
				require.Equal(t, "report", got[0].Workflow, rule)
				require.Equal(t, store.RunPending, got[0].Status, rule)
				require.Len(t, got[0].Tasks, 1, rule)
			},
		},
		{
			name: "CursorSurvivesArrivalsAndRemovals",
			rule: "a cursor stays valid while runs arrive and are removed: later pages list each older run once, and none that arrived after the first page",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				var old []*store.Run
				for i := 0; i < 9; i++ {
					old = append(old, createRun(t, h, &runOpts{Service: "svc"}))
					if i%3 == 2 {
						h.Advance(time.Millisecond) // runs of one millisecond tie
					}
				}
				seen := map[string]bool{}
				var order []*store.Run
				f := store.RunFilter{Service: "svc"}
				cursor := ""
				removed := map[string]bool{}
				for page := 0; ; page++ {
					res, err := q.RunList(bg, &store.RunListParams{Filter: f, Cursor: cursor, Limit: 2})
					require.NoError(t, err, rule)
					require.LessOrEqual(t, len(res.Runs), 2, rule)
					for _, r := range res.Runs {
						require.False(t, seen[r.ID], "%s: run %s listed twice", rule, r.ID)
						require.False(t, removed[r.ID], "%s: removed run %s listed", rule, r.ID)
						seen[r.ID] = true
						order = append(order, r)
					}
					if res.NextCursor == "" {
						break
					}
					require.Less(t, page, 20, rule)
					cursor = res.NextCursor
					// A newer run arrives, and an older one not yet listed goes.
					createRun(t, h, &runOpts{Service: "svc"})
					if page == 0 {
						victim := old[2]
						cancelRun(t, h, victim.ID)
						require.NoError(t, q.RunDelete(bg, &store.RunDeleteParams{ID: victim.ID}), rule)
						removed[victim.ID] = true
					}
				}
				for _, r := range old {
					require.Equal(t, !removed[r.ID], seen[r.ID], "%s: run %s", rule, r.ID)
				}
				require.Len(t, order, len(old)-len(removed), rule)
				for i := 1; i < len(order); i++ {
					require.False(t, order[i].CreatedAt.After(order[i-1].CreatedAt), "%s: newest first", rule)
				}
			},
		},
		{
			name: "BadQueriesRefused",
			rule: "a query or count with a bad filter, limit or cursor answers ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				createRun(t, h, nil)
				for _, p := range []store.RunListParams{
					{Limit: 0},
					{Limit: store.QueryLimitMax + 1},
					{Limit: 1, Filter: store.RunFilter{Tenant: "t:u"}},
					{Limit: 1, Filter: store.RunFilter{EndedFrom: h.Now(), EndedTo: h.Now()}},
					{Limit: 1, Filter: store.RunFilter{EndedFrom: h.Now(), Statuses: []store.RunStatus{store.RunRunning}}},
					{Limit: 1, Filter: store.RunFilter{ErrorPrefix: strings.Repeat("e", store.ErrorPrefixMax+1)}},
					{Limit: 1, Cursor: "not a cursor", Filter: store.RunFilter{EndedTo: h.Now()}},
					{Limit: 1, Filter: store.RunFilter{Service: "a:b"}},
					{Limit: 1, Filter: store.RunFilter{Statuses: []store.RunStatus{"done"}}},
					{Limit: 1, Filter: store.RunFilter{CreatedFrom: h.Now(), CreatedTo: h.Now()}},
					{Limit: 1, Cursor: "not a cursor"},
				} {
					_, err := q.RunList(bg, &p)
					require.ErrorIs(t, err, store.ErrInvalidArgument, "%s: %+v", rule, p)
					if p.Cursor == "" && p.Filter.Validate() != nil {
						_, err = q.RunCount(bg, &store.RunCountParams{Filter: p.Filter})
						require.ErrorIs(t, err, store.ErrInvalidArgument, "%s: count %+v", rule, p)
					}
				}
				_, err := q.RunCount(bg, &store.RunCountParams{Limit: store.RunCountLimitMax + 1})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
		{
			name: "BadNamesRefusedAtCreate",
			rule: "RunCreate refuses a service or tenant that is not a valid name (it would name an index) with ErrInvalidArgument, and writes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				for _, o := range []store.RunCreateParams{{Service: "a:b"}, {Service: "svc", Tenant: "t{1}"}} {
					o.Workflow = spec(store.StrategyContinue, task("a"))
					_, err := h.Store.RunCreate(bg, &o)
					require.ErrorIs(t, err, store.ErrInvalidArgument, "%s: %+v", rule, o)
				}
				require.Empty(t, queryAll(t, h, store.RunFilter{}, 10, rule), rule)
			},
		},
		{
			name: "CountsPerStatus",
			rule: "RunCount counts the runs in each status, in a creation time range when given",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				first := createRun(t, h, nil)
				h.Advance(time.Millisecond)
				second := createRun(t, h, nil)
				createRun(t, h, nil)
				cancelRun(t, h, first.ID)
				require.Len(t, claim(t, h, &claimOpts{Limit: 1}).Tasks, 1, rule)
				res, err := q.RunCount(bg, &store.RunCountParams{})
				require.NoError(t, err, rule)
				require.Equal(t, int64(1), res.Counts[store.RunCancelled], rule)
				require.Equal(t, int64(2), res.Counts[store.RunPending]+res.Counts[store.RunRunning], rule)
				require.Equal(t, int64(1), res.Counts[store.RunRunning], rule)
				require.Zero(t, res.Counts[store.RunCompleted], rule)
				res, err = q.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{CreatedFrom: second.CreatedAt}})
				require.NoError(t, err, rule)
				require.Zero(t, res.Counts[store.RunCancelled], rule)
				require.Equal(t, int64(2), res.Counts[store.RunPending]+res.Counts[store.RunRunning], rule)
			},
		},
		{
			name: "DeleteRemovesAFinishedRun",
			rule: "RunDelete refuses an unfinished run with ErrRunActive, and removes a finished one with its key, indexes and count",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				w := spec(store.StrategyContinue, task("a"), task("b", "a"))
				r := createRun(t, h, &runOpts{Workflow: w, Key: "k1", Service: "svc", Tenant: "t"})
				err := q.RunDelete(bg, &store.RunDeleteParams{ID: r.ID})
				require.ErrorIs(t, err, store.ErrRunActive, rule)
				require.Equal(t, store.RunPending, getRun(t, h, r.ID).Status, rule)
				ct := claimOne(t, h, "a", rule)
				failTask(t, h, ct.Lease, "boom", rule)
				cancelRun(t, h, r.ID)
				require.NoError(t, q.RunDelete(bg, &store.RunDeleteParams{ID: r.ID}), rule)
				_, err = h.Store.RunGet(bg, &store.RunGetParams{ID: r.ID})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				require.Empty(t, queryAll(t, h, store.RunFilter{Service: "svc", Tenant: "t"}, 10, rule), rule)
				require.Empty(t, queryAll(t, h, store.RunFilter{}, 10, rule), rule)
				res, err := q.RunCount(bg, &store.RunCountParams{})
				require.NoError(t, err, rule)
				require.Zero(t, res.Counts[store.RunFailed]+res.Counts[store.RunCancelled], rule)
				again := createRun(t, h, &runOpts{Key: "k1"})
				require.NotEqual(t, r.ID, again.ID, "%s: the key is free again", rule)
				require.ErrorIs(t, q.RunDelete(bg, &store.RunDeleteParams{ID: r.ID}), store.ErrNotFound, rule)
			},
		},
		{
			name: "RetentionPrunesIndexes",
			rule: "after its retention a finished run is listed and counted no more once RunPrune has run; an unfinished run stays",
			run: func(t *testing.T, h *Harness, rule string) {
				if !h.Caps.ExpiresKeys || h.Caps.Retention <= 0 {
					t.Skip("needs Caps.ExpiresKeys and Caps.Retention")
				}
				q := h.Store.(store.QueryStore)
				done := createRun(t, h, &runOpts{Service: "svc", Tenant: "t"})
				cancelRun(t, h, done.ID)
				h.Advance(time.Millisecond)
				open := createRun(t, h, &runOpts{Service: "svc", Tenant: "t"})
				h.Advance(h.Caps.Retention + time.Second)
				for {
					res, err := q.RunPrune(bg, &store.RunPruneParams{Limit: 1})
					require.NoError(t, err, rule)
					if !res.More {
						break
					}
				}
				require.Equal(t, []string{open.ID}, ids(queryAll(t, h, store.RunFilter{Service: "svc", Tenant: "t"}, 10, rule)), rule)
				require.Equal(t, []string{open.ID}, ids(queryAll(t, h, store.RunFilter{}, 10, rule)), rule)
				res, err := q.RunCount(bg, &store.RunCountParams{})
				require.NoError(t, err, rule)
				require.Zero(t, res.Counts[store.RunCancelled], rule)
				require.Equal(t, int64(1), res.Counts[store.RunPending], rule)
			},
		},
		{
			name: "TasksOfARunByStatus",
			rule: "TaskList lists a run's tasks in definition order, only those in the statuses asked when given",
			run: func(t *testing.T, h *Harness, rule string) {
				q := h.Store.(store.QueryStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "c"), task("c", "a"))})
				ct := claimOne(t, h, "a", rule)
				succeed(t, h, ct.Lease, "ok", rule)
				res, err := q.TaskList(bg, &store.TaskListParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.Equal(t, []string{"a", "b", "c"}, taskNames(res.Tasks), rule)
				res, err = q.TaskList(bg, &store.TaskListParams{RunID: r.ID, Statuses: []store.TaskStatus{store.TaskReady}})
				require.NoError(t, err, rule)
				require.Equal(t, []string{"c"}, taskNames(res.Tasks), rule)
				res, err = q.TaskList(bg, &store.TaskListParams{RunID: r.ID, Statuses: []store.TaskStatus{store.TaskSucceeded}})
				require.NoError(t, err, rule)
				require.Equal(t, []string{"a"}, taskNames(res.Tasks), rule)
				res, err = q.TaskList(bg, &store.TaskListParams{RunID: r.ID, Statuses: []store.TaskStatus{store.TaskPending, store.TaskSucceeded}})
				require.NoError(t, err, rule)
				require.Equal(t, []string{"a", "b"}, taskNames(res.Tasks), rule)
				_, err = q.TaskList(bg, &store.TaskListParams{RunID: r.ID + "0"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
	})
	runCases(t, newHarness, runFilterCases)
}

// queryAll reads every page of a query, limit runs per page.
func queryAll(t *testing.T, h *Harness, f store.RunFilter, limit int, rule string) []*store.Run {
	t.Helper()
	q := h.Store.(store.QueryStore)
	var out []*store.Run
	cursor := ""
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "%s: a query must end", rule)
		res, err := q.RunList(bg, &store.RunListParams{Filter: f, Cursor: cursor, Limit: limit})
		require.NoError(t, err, rule)
		require.LessOrEqual(t, len(res.Runs), limit, rule)
		out = append(out, res.Runs...)
		if res.NextCursor == "" {
			return out
		}
		cursor = res.NextCursor
	}
}

// cancelRun cancels a run, which finishes it.
func cancelRun(t *testing.T, h *Harness, id string) {
	t.Helper()
	r, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: id, Reason: "test"})
	require.NoError(t, err)
	require.True(t, r.Status.Terminal())
}

func ids(runs []*store.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func taskNames(tasks []store.TaskInstance) []string {
	out := []string{}
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return slices.Clip(out)
}
