package storetest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// deadLetterFilterCases are the cases of [store.DeadLetterStore] about the
// run's and task's fields a letter carries and filters by, and about the
// bounded read behind the filters.
func deadLetterFilterCases() []testCase {
	return []testCase{
		{
			name: "FiltersExact",
			rule: "every letter carries its run's tenant, service and workflow and its task's queue and handler, and each filter, alone or combined, pages exactly the letters that match it, newest first",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.DeadLetterStore)
				want := deadLetterMix(t, h, rule)
				all := pageDead(t, d, store.DeadLetterListParams{}, 1000, rule)
				require.Equal(t, letterKeys(want), letterKeys(all), rule)
				for i := range want {
					l := all[i]
					w := want[i]
					require.Equal(t, []string{w.Workflow, w.Tenant, w.Service, w.Queue, w.Handler, w.Error},
						[]string{l.Workflow, l.Tenant, l.Service, l.Queue, l.Handler, l.Error}, rule+": %s", letterKeys(all)[i])
					sameTime(t, w.At, l.At, rule)
				}
				for _, p := range []store.DeadLetterListParams{
					{Tenant: "acme"}, {Service: "billing"}, {Tenant: "acme", Service: "billing"}, {Tenant: "zeta"},
					{Workflow: "etl"}, {Workflow: "etl", Service: "mail"}, {Queue: "q2"}, {Handler: "h1"},
					{Queue: "q1", Handler: "h2"}, {ErrorPrefix: "timeout"}, {ErrorPrefix: "timeout", Tenant: "acme", Queue: "q1"},
					{Task: "b", Service: "billing"}, {Since: want[len(want)-1].At.Add(time.Second), Tenant: "acme"},
					{Tenant: "nobody"},
				} {
					var match []store.DeadLetter
					for _, w := range want {
						if p.Matches(&w) {
							match = append(match, w)
						}
					}
					for _, limit := range []int{1, 3, 100} {
						got := pageDead(t, d, p, limit, rule)
						require.Equal(t, letterKeys(match), letterKeys(got), rule+": filter %+v, pages of %d", p, limit)
					}
				}
			},
		},
		{
			name: "BoundedReadsReachEveryLetter",
			rule: "a filter that matches few letters may answer short pages, even empty, with a cursor, and paging on still lists every matching letter once, across letters of one millisecond and a cursor whose letter was purged",
			run: func(t *testing.T, h *Harness, rule string) {
				d := h.Store.(store.DeadLetterStore)
				rare := createRun(t, h, &runOpts{Tenant: "rare", Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"))})
				for _, ct := range claim(t, h, nil).Tasks {
					failTask(t, h, ct.Lease, "rare", rule)
				}
				h.Advance(time.Millisecond)
				const n = 1100 // past one page and store.DeadLetterReadMax
				var tasks []store.TaskSpec
				for i := range n {
					tasks = append(tasks, task(fmt.Sprintf("t%04d", i)))
				}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				var outs []store.TaskOutcome
				for len(outs) < n {
					got := claim(t, h, &claimOpts{Limit: 500}).Tasks
					require.NotEmpty(t, got, rule)
					for _, ct := range got {
						outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "common"})
					}
				}
				// one call: every letter of one millisecond
				res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: outs})
				require.NoError(t, err, rule)
				for _, r := range res {
					require.NoError(t, r.Err, rule)
				}

				got := pageDead(t, d, store.DeadLetterListParams{Tenant: "rare"}, 2, rule)
				require.Equal(t, []string{rare.ID + " c", rare.ID + " b", rare.ID + " a"}, letterKeys(got), rule)
				all := pageDead(t, d, store.DeadLetterListParams{}, 1000, rule)
				require.Len(t, all, n+3, rule)
				require.Equal(t, rare.ID+" a", letterKeys(all)[n+2], rule)

				// a cursor inside the millisecond whose letter is purged
				p := store.DeadLetterListParams{Limit: 10, Tenant: "rare"}
				page, err := d.DeadLetterList(bg, &p)
				require.NoError(t, err, rule)
				var seen []string
				for page.NextCursor != "" && len(page.Letters) == 0 {
					_, key, err := store.ParseDeadLetterCursor(page.NextCursor)
					require.NoError(t, err, rule)
					run, name, _ := strings.Cut(key, " ")
					_, err = d.DeadLetterPurge(bg, &store.DeadLetterPurgeParams{Letters: []store.DeadLetterRef{{RunID: run, Task: name}}})
					require.NoError(t, err, rule)
					p.Cursor = page.NextCursor
					page, err = d.DeadLetterList(bg, &p)
					require.NoError(t, err, rule)
				}
				seen = append(seen, letterKeys(page.Letters)...)
				for page.NextCursor != "" {
					p.Cursor = page.NextCursor
					page, err = d.DeadLetterList(bg, &p)
					require.NoError(t, err, rule)
					seen = append(seen, letterKeys(page.Letters)...)
				}
				require.Equal(t, []string{rare.ID + " c", rare.ID + " b", rare.ID + " a"}, seen, rule)
			},
		},
	}
}

// deadLetterMix fails tasks of runs of several tenants, services,
// workflows, queues and handlers, some in one millisecond, and answers the
// letters as the test made them, newest first.
func deadLetterMix(t *testing.T, h *Harness, rule string) []store.DeadLetter {
	t.Helper()
	type runMix struct{ wf, tenant, service string }
	mixes := []runMix{
		{"etl", "acme", "billing"}, {"etl", "", "mail"}, {"mail", "acme", "mail"}, {"etl", "zeta", "billing"},
		{"report", "", ""}, {"mail", "zeta", ""}, {"etl", "acme", "billing"}, {"report", "acme", "mail"},
	}
	errs := []string{"timeout after 30s", "bad input: order 17", "timeout: db", "no route to 10.0.0.7"}
	var want []store.DeadLetter
	for i, m := range mixes {
		a, b := task("a"), task("b")
		a.Queue, a.Handler = "q1", "h1"
		b.Queue, b.Handler = "q2", "h2"
		if i%3 == 0 {
			b.Handler = "h1"
		}
		if i%2 == 0 {
			a.Handler = "h2"
		}
		wf := spec(store.StrategyContinue, a, b)
		wf.Name = m.wf
		r := createRun(t, h, &runOpts{Workflow: wf, Tenant: m.tenant, Service: m.service})
		got := claim(t, h, &claimOpts{Queues: []string{"q1", "q2"}}).Tasks
		require.Len(t, got, 2, rule)
		sort.Slice(got, func(i, j int) bool { return got[i].Lease.Task < got[j].Lease.Task })
		for j, ct := range got {
			sp := a
			if ct.Lease.Task == "b" {
				sp = b
			}
			msg := errs[(i+j)%len(errs)]
			failTask(t, h, ct.Lease, msg, rule)
			want = append(want, store.DeadLetter{RunID: r.ID, Task: sp.Name, Workflow: m.wf, Tenant: m.tenant, Service: m.service,
				Queue: sp.Queue, Handler: sp.Handler, Status: store.TaskFailed, Error: msg, At: h.Now().Truncate(time.Millisecond)})
			if (i+j)%3 != 0 { // some letters share a millisecond
				h.Advance(time.Second)
			}
		}
	}
	sort.SliceStable(want, func(i, j int) bool {
		return store.DeadLetterBefore(want[i].At.UnixMilli(), want[i].RunID+" "+want[i].Task, want[j].At.UnixMilli(), want[j].RunID+" "+want[j].Task)
	})
	return want
}

// pageDead lists every letter matching p in pages of limit, following the
// cursors, and requires no letter twice.
func pageDead(t *testing.T, d store.DeadLetterStore, p store.DeadLetterListParams, limit int, rule string) []store.DeadLetter {
	t.Helper()
	p.Limit = limit
	var out []store.DeadLetter
	seen := map[string]bool{}
	for calls := 0; ; calls++ {
		require.Less(t, calls, 10000, rule+": paging ends")
		page := listDead(t, d, p, rule)
		require.LessOrEqual(t, len(page.Letters), limit, rule)
		for _, l := range page.Letters {
			k := l.RunID + " " + l.Task
			require.False(t, seen[k], rule+": %s listed twice", k)
			seen[k] = true
			out = append(out, l)
		}
		if page.NextCursor == "" {
			return out
		}
		p.Cursor = page.NextCursor
	}
}
