package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testDeadLetters is the suite of [store.DeadLetterStore].
func testDeadLetters(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(deadLetterFilterCases(), []testCase{
		{
			name: "ListFiltersAndPages",
			rule: "DeadLetterList answers failed and dead tasks of every run, newest first, filtered by run, workflow, task, error prefix and time, in pages that miss and repeat nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.DeadLetterStore)
				t0 := h.Now()
				wf := func(name string) *store.WorkflowSpec {
					w := spec(store.StrategyContinue, task("a"), task("b"))
					w.Name = name
					return w
				}
				r1 := createRun(t, h, &runOpts{Workflow: wf("etl")})
				r2 := createRun(t, h, &runOpts{Workflow: wf("mail")})
				got := claim(t, h, nil).Tasks
				require.Len(t, got, 4, rule)
				first, second := map[string]*store.ClaimedTask{}, map[string]*store.ClaimedTask{}
				for _, ct := range got {
					if ct.Lease.RunID == r1.ID {
						first[ct.Lease.Task] = ct
					} else {
						second[ct.Lease.Task] = ct
					}
				}
				failTask(t, h, first["a"].Lease, "timeout: upstream", rule)
				h.Advance(time.Second)
				failTask(t, h, second["a"].Lease, "bad input", rule)
				h.Advance(time.Second)
				failTask(t, h, first["b"].Lease, "timeout: db", rule)
				h.Advance(time.Second)
				succeed(t, h, second["b"].Lease, "", rule)

				all := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule)
				require.Equal(t, []string{r1.ID + " b", r2.ID + " a", r1.ID + " a"}, letterKeys(all.Letters), rule)
				require.Empty(t, all.NextCursor, rule)
				l := all.Letters[0]
				require.Equal(t, "etl", l.Workflow, rule)
				require.Equal(t, store.TaskFailed, l.Status, rule)
				require.Equal(t, "timeout: db", l.Error, rule)
				sameTime(t, t0.Add(2*time.Second), l.At, rule)

				for _, c := range []struct {
					p    store.DeadLetterListParams
					want []string
				}{
					{store.DeadLetterListParams{RunID: r1.ID}, []string{r1.ID + " b", r1.ID + " a"}},
					{store.DeadLetterListParams{Workflow: "mail"}, []string{r2.ID + " a"}},
					{store.DeadLetterListParams{Task: "a"}, []string{r2.ID + " a", r1.ID + " a"}},
					{store.DeadLetterListParams{ErrorPrefix: "timeout:"}, []string{r1.ID + " b", r1.ID + " a"}},
					{store.DeadLetterListParams{Since: t0.Add(time.Second), Until: t0.Add(2 * time.Second)}, []string{r2.ID + " a"}},
				} {
					c.p.Limit = 10
					require.Equal(t, c.want, letterKeys(listDead(t, d, c.p, rule).Letters), rule+": %+v", c.p)
				}

				var paged []string
				p := store.DeadLetterListParams{Limit: 2}
				for {
					page := listDead(t, d, p, rule)
					paged = append(paged, letterKeys(page.Letters)...)
					if page.NextCursor == "" {
						break
					}
					p.Cursor = page.NextCursor
				}
				require.Equal(t, letterKeys(all.Letters), paged, rule)
				_, err := d.DeadLetterList(bg, &store.DeadLetterListParams{Limit: 0})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = d.DeadLetterList(bg, &store.DeadLetterListParams{Limit: 1, Cursor: "nonsense"})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
		{
			name: "PurgeTouchesOnlyTheNamed",
			rule: "DeadLetterPurge removes exactly the named letters, once; another run's letters, and the tasks themselves, stay",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.DeadLetterStore)
				r1 := createRun(t, h, nil)
				r2 := createRun(t, h, nil)
				for _, ct := range claim(t, h, nil).Tasks {
					failTask(t, h, ct.Lease, "boom", rule)
				}
				res, err := d.DeadLetterPurge(bg, &store.DeadLetterPurgeParams{Letters: []store.DeadLetterRef{{RunID: r1.ID, Task: "a"}, {RunID: r1.ID, Task: "zz"}}})
				require.NoError(t, err, rule)
				require.Equal(t, 1, res.Purged, rule)
				res, err = d.DeadLetterPurge(bg, &store.DeadLetterPurgeParams{Letters: []store.DeadLetterRef{{RunID: r1.ID, Task: "a"}}})
				require.NoError(t, err, rule)
				require.Zero(t, res.Purged, rule+": purging again removes nothing")
				left := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule)
				require.Equal(t, []string{r2.ID + " a"}, letterKeys(left.Letters), rule)
				require.Equal(t, store.TaskFailed, taskOf(t, h, r1.ID, "a").Status, rule+": the task itself stays")
			},
		},
		{
			name: "DeadTasksListed",
			rule: "a task that died of crashes is listed with status dead",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.DeadLetterStore)
				r := createRun(t, h, nil)
				claim(t, h, &claimOpts{Lease: time.Second})
				h.Advance(2 * time.Second)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 0})
				require.NoError(t, err, rule)
				require.Len(t, sw.Dead, 1, rule)
				got := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule)
				require.Equal(t, []string{r.ID + " a"}, letterKeys(got.Letters), rule)
				require.Equal(t, store.TaskDead, got.Letters[0].Status, rule)
			},
		},
	}...))
}

func listDead(t *testing.T, d store.DeadLetterStore, p store.DeadLetterListParams, rule string) *store.DeadLetterListResult {
	t.Helper()
	res, err := d.DeadLetterList(bg, &p)
	require.NoError(t, err, rule)
	return res
}

func letterKeys(ls []store.DeadLetter) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.RunID+" "+l.Task)
	}
	return out
}
