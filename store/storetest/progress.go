package storetest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testProgress is the suite of [store.ProgressStore].
func testProgress(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "LatestReportReadBack",
			rule: "a running attempt's reports replace one another: RunGet and TaskList answer the latest on the task, with its value, note, attempt, epoch and the store's time; a task that never reported has none",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				a := got["a"]
				requireReported(t, h, rule, report(a.Lease, 0.25, "quarter"))
				h.Advance(time.Second)
				at := h.Now()
				requireReported(t, h, rule, report(a.Lease, 0.5, "half"))
				run := getRun(t, h, r.ID)
				want := &store.TaskProgress{Value: 0.5, Note: "half", Attempt: a.Attempt, Epoch: a.Lease.Epoch, At: at}
				sameProgress(t, want, run.Task("a").Progress, rule)
				require.Nil(t, run.Task("b").Progress, rule+": a task that never reported has none")
				if qs, ok := h.Store.(store.QueryStore); ok {
					res, err := qs.TaskList(bg, &store.TaskListParams{RunID: r.ID})
					require.NoError(t, err, rule)
					for _, ti := range res.Tasks {
						if ti.Name == "a" {
							sameProgress(t, want, ti.Progress, rule)
						} else {
							require.Nil(t, ti.Progress, rule)
						}
					}
				}
			},
		},
		{
			name: "StaleEpochRefused",
			rule: "a report whose lease no longer holds (swept, or its attempt ended) answers ErrStaleEpoch and writes nothing; an unknown run or task answers ErrNotFound",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				old := claim(t, h, &claimOpts{Lease: time.Second}).Tasks[0]
				h.Advance(2 * time.Second)
				_, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.ErrorIs(t, progressErrs(t, h, report(old.Lease, 0.9, "late"))[0], store.ErrStaleEpoch, rule)
				require.Nil(t, taskOf(t, h, r.ID, "a").Progress, rule+": a refused report writes nothing")

				cur := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(cur.Lease, 0.1, "current"))
				succeed(t, h, cur.Lease, "ok", rule)
				require.ErrorIs(t, progressErrs(t, h, report(cur.Lease, 1, "after the end"))[0], store.ErrStaleEpoch, rule+": an ended attempt reports no more")
				p := taskOf(t, h, r.ID, "a").Progress
				require.NotNil(t, p, rule)
				require.Equal(t, "current", p.Note, rule)

				errs := progressErrs(t, h,
					report(store.Lease{RunID: r.ID, Task: "zz", Epoch: 1}, 0, ""),
					report(store.Lease{RunID: "no-such-run", Task: "a", Epoch: 1}, 0, ""))
				require.ErrorIs(t, errs[0], store.ErrNotFound, rule)
				require.ErrorIs(t, errs[1], store.ErrNotFound, rule)
			},
		},
		{
			name: "MixedBatch",
			rule: "a batch answers each report on its own, in order: the valid ones are stored, the stale and unknown ones refused, and no refusal holds back another report",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"))})
				got := claimNames(t, h)
				succeed(t, h, got["c"].Lease, "ok", rule)
				other := createRun(t, h, nil)
				o := claimOne(t, h, "a", rule)
				errs := progressErrs(t, h,
					report(got["a"].Lease, 1, "a"),
					report(got["c"].Lease, 2, "c"),
					report(store.Lease{RunID: r.ID, Task: "zz", Epoch: 1}, 3, "zz"),
					report(got["b"].Lease, 4, "b"),
					report(o.Lease, 5, "other run"))
				require.NoError(t, errs[0], rule)
				require.ErrorIs(t, errs[1], store.ErrStaleEpoch, rule)
				require.ErrorIs(t, errs[2], store.ErrNotFound, rule)
				require.NoError(t, errs[3], rule)
				require.NoError(t, errs[4], rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, 1.0, run.Task("a").Progress.Value, rule)
				require.Equal(t, 4.0, run.Task("b").Progress.Value, rule)
				require.Nil(t, run.Task("c").Progress, rule)
				require.Equal(t, 5.0, taskOf(t, h, other.ID, "a").Progress.Value, rule)
			},
		},
		{
			name: "ValuesAndNotesExact",
			rule: "any finite value and any note up to TaskProgressNoteMax bytes read back exactly; a value that is not finite or a longer note refuses the whole call with ErrInvalidArgument, storing nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				note := strings.Repeat("é;,\n%", store.TaskProgressNoteMax/6) + "x"
				require.LessOrEqual(t, len(note), store.TaskProgressNoteMax, rule)
				for _, v := range []float64{0, -0.5, 1e-300, 12345678.901234567, math.MaxFloat64, 1.0 / 3} {
					requireReported(t, h, rule, report(ct.Lease, v, note))
					p := taskOf(t, h, r.ID, "a").Progress
					require.NotNil(t, p, rule)
					require.Equal(t, v, p.Value, rule)
					require.Equal(t, note, p.Note, rule)
				}
				requireReported(t, h, rule, report(ct.Lease, 7, ""))
				ps := h.Store.(store.ProgressStore)
				for _, bad := range []store.ProgressReport{
					report(ct.Lease, math.NaN(), ""),
					report(ct.Lease, math.Inf(1), ""),
					report(ct.Lease, 1, strings.Repeat("x", store.TaskProgressNoteMax+1)),
				} {
					_, err := ps.TaskProgress(bg, &store.TaskProgressParams{Reports: []store.ProgressReport{report(ct.Lease, 8, "fine"), bad}})
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				}
				p := taskOf(t, h, r.ID, "a").Progress
				require.Equal(t, 7.0, p.Value, rule+": a refused call stores nothing")
				require.Empty(t, p.Note, rule)
			},
		},
		{
			name: "KeptOnTheAttemptRecord",
			rule: "each attempt record keeps the last report of its attempt (none when it made none); the task shows the latest report of any attempt until a later attempt reports",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(first.Lease, 0.2, "one"), report(first.Lease, 0.3, "one, later"))
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeRetry, Error: "x"}).Err, rule)
				require.Equal(t, "one, later", taskOf(t, h, r.ID, "a").Progress.Note, rule+": the report stays while the task waits for its retry")
				second := claimOne(t, h, "a", rule)
				require.Equal(t, "one, later", taskOf(t, h, r.ID, "a").Progress.Note, rule+": a new attempt shows the last report until it reports")
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: second.Lease, Outcome: store.OutcomeRetry, Error: "y"}).Err, rule)
				third := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(third.Lease, 0.9, "three"))
				succeed(t, h, third.Lease, "ok", rule)

				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, "three", ti.Progress.Note, rule)
				require.Equal(t, 3, ti.Progress.Attempt, rule)
				check := func(recs []store.Attempt) {
					require.Len(t, recs, 3, rule)
					require.NotNil(t, recs[0].Progress, rule)
					require.Equal(t, [...]any{0.3, "one, later", 1, first.Lease.Epoch}, [...]any{recs[0].Progress.Value, recs[0].Progress.Note, recs[0].Progress.Attempt, recs[0].Progress.Epoch}, rule)
					require.Nil(t, recs[1].Progress, rule+": an attempt that reported nothing keeps nothing")
					require.NotNil(t, recs[2].Progress, rule)
					require.Equal(t, [...]any{0.9, "three", 3, third.Lease.Epoch}, [...]any{recs[2].Progress.Value, recs[2].Progress.Note, recs[2].Progress.Attempt, recs[2].Progress.Epoch}, rule)
				}
				check(ti.Attempts)
				if hs, ok := h.Store.(store.HistoryStore); ok {
					check(history(t, hs, r.ID, "a", rule))
				}
			},
		},
		{
			name: "ReplayClearsResetTasks",
			rule: "a replay clears the latest report of the tasks it resets, whose attempt records keep theirs, and leaves the report of every other task; a report's event carries the generation it was made in",
			run: func(t *testing.T, h *Harness, rule string) {
				rs, ok := h.Store.(store.ReplayStore)
				if !ok {
					t.Skip("needs ReplayStore")
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("d"))})
				got := claimNames(t, h)
				requireReported(t, h, rule, report(got["a"].Lease, 0.4, "a"), report(got["d"].Lease, 1, "d"))
				failTask(t, h, got["a"].Lease, "boom", rule)
				succeed(t, h, got["d"].Lease, "ok", rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Tasks: []string{"a"}})
				require.NoError(t, err, rule)
				run := getRun(t, h, r.ID)
				require.Nil(t, run.Task("a").Progress, rule)
				require.Len(t, run.Task("a").Attempts, 1, rule)
				require.NotNil(t, run.Task("a").Attempts[0].Progress, rule)
				require.Equal(t, "a", run.Task("a").Attempts[0].Progress.Note, rule)
				require.NotNil(t, run.Task("d").Progress, rule)
				require.Equal(t, "d", run.Task("d").Progress.Note, rule)

				again := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(again.Lease, 0.6, "again"))
				succeed(t, h, again.Lease, "ok", rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, "again", ti.Progress.Note, rule)
				require.Len(t, ti.Attempts, 2, rule)
				require.Equal(t, "a", ti.Attempts[0].Progress.Note, rule)
				require.Equal(t, "again", ti.Attempts[1].Progress.Note, rule)
				if _, ok := h.Store.(store.EventStore); ok {
					evs, _ := readEvents(t, h, r.ID, "", 1000)
					var gens []int64
					for _, e := range evs {
						if e.Type == store.EventTaskProgress && e.Task == "a" {
							gens = append(gens, e.Generation)
						}
					}
					require.Equal(t, []int64{0, 1}, gens, rule+": each report's event carries the generation it was made in")
				}
			},
		},
		{
			name: "KeptWithHistoryPastTheRun",
			rule: "attempt records kept past their run keep the report of each attempt",
			run: func(t *testing.T, h *Harness, rule string) {
				hs, ok := h.Store.(store.HistoryStore)
				if !ok || !h.Caps.ExpiresKeys || h.Caps.HistoryRetention <= h.Caps.Retention {
					t.Skip("needs HistoryStore, Caps.ExpiresKeys and Caps.HistoryRetention above Caps.Retention")
				}
				r := createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(first.Lease, 0.5, "first"))
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeRetry, Error: "x"}).Err, rule)
				second := claimOne(t, h, "a", rule)
				requireReported(t, h, rule, report(second.Lease, 1, "second"))
				succeed(t, h, second.Lease, "ok", rule)
				before := history(t, hs, r.ID, "a", rule)
				h.Advance(h.Caps.Retention + time.Second)
				_, err := h.Store.RunGet(bg, &store.RunGetParams{ID: r.ID})
				require.ErrorIs(t, err, store.ErrNotFound, rule+": the run is gone")
				after := history(t, hs, r.ID, "a", rule)
				require.Equal(t, before, after, rule)
				require.Len(t, after, 2, rule)
				require.Equal(t, [...]any{"first", "second"}, [...]any{after[0].Progress.Note, after[1].Progress.Note}, rule)
			},
		},
		{
			name: "EventPerReport",
			rule: "each stored report records one task_progress event in the same step, carrying the report (value, note, attempt, epoch, time), the task running and its attempt; a refused report records none",
			run: func(t *testing.T, h *Harness, rule string) {
				if _, ok := h.Store.(store.EventStore); !ok {
					t.Skip("needs EventStore")
				}
				r := createRun(t, h, nil)
				ct := claim(t, h, &claimOpts{Worker: "node-1.w1"}).Tasks[0]
				_, cur := readEvents(t, h, r.ID, "", 100)
				at := h.Now()
				requireReported(t, h, rule, report(ct.Lease, 0.5, "half, done; \"ok\""))
				h.Advance(time.Second)
				requireReported(t, h, rule, report(ct.Lease, 0.75, ""))
				progressErrs(t, h, report(store.Lease{RunID: r.ID, Task: "a", Epoch: ct.Lease.Epoch + 1}, 9, "stale"))
				evs, _ := readEvents(t, h, r.ID, cur, 100)
				require.Equal(t, []string{"task_progress a", "task_progress a"}, eventTypes(evs), rule)
				e := evs[0]
				require.Equal(t, store.EventTaskProgress, e.Type, rule)
				require.Equal(t, [...]any{r.ID, "a", store.TaskRunning, ct.Attempt, ct.Lease.Epoch, "node-1.w1"},
					[...]any{e.RunID, e.Task, e.TaskStatus, e.Attempt, e.Epoch, e.Worker}, rule)
				sameTime(t, at, e.At, rule)
				sameProgress(t, &store.TaskProgress{Value: 0.5, Note: "half, done; \"ok\"", Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, At: at}, e.Progress, rule)
				sameProgress(t, &store.TaskProgress{Value: 0.75, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, At: at.Add(time.Second)}, evs[1].Progress, rule)
				require.Empty(t, e.Error, rule)
				require.Zero(t, e.Duration, rule)
			},
		},
	})
}

// report builds one progress report.
func report(l store.Lease, v float64, note string) store.ProgressReport {
	return store.ProgressReport{Lease: l, Value: v, Note: note}
}

// progressErrs sends reports in one call, requires the call to succeed,
// and answers each report's error.
func progressErrs(t *testing.T, h *Harness, reps ...store.ProgressReport) []error {
	t.Helper()
	res, err := h.Store.(store.ProgressStore).TaskProgress(bg, &store.TaskProgressParams{Reports: reps})
	require.NoError(t, err, "TaskProgress must succeed as a call")
	require.Len(t, res, len(reps), "TaskProgress answers once per report")
	out := make([]error, len(res))
	for i, r := range res {
		out[i] = r.Err
	}
	return out
}

// requireReported sends reports in one call and requires each stored.
func requireReported(t *testing.T, h *Harness, rule string, reps ...store.ProgressReport) {
	t.Helper()
	for _, err := range progressErrs(t, h, reps...) {
		require.NoError(t, err, rule)
	}
}

// sameProgress compares two reports, times to the millisecond.
func sameProgress(t *testing.T, want, got *store.TaskProgress, rule string) {
	t.Helper()
	require.NotNil(t, got, rule)
	require.Equal(t, [...]any{want.Value, want.Note, want.Attempt, want.Epoch}, [...]any{got.Value, got.Note, got.Attempt, got.Epoch}, rule)
	sameTime(t, want.At, got.At, rule)
}
