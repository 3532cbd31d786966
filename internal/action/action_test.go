package action_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// env is a memstore and a client Scheduler over it.
type env struct {
	st *memstore.Store
	s  *plait.Scheduler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := memstore.New()
	must(t, err)
	s, err := plait.New(st, plait.WithLogger(slog.New(slog.DiscardHandler)))
	must(t, err)
	for _, h := range []string{"ok", "fail"} {
		must(t, s.Handle(h, func(context.Context, *plait.Task) (any, error) {
			if h == "fail" {
				return nil, plait.Permanent(errors.New("card declined"))
			}
			return nil, nil
		}))
	}
	return &env{st: st, s: s}
}

// submit submits n one-task runs of workflow wf nothing runs yet.
func (e *env) submit(t *testing.T, wf string, n int, opts ...plait.SubmitOption) []string {
	t.Helper()
	var ids []string
	for range n {
		r, err := e.s.Submit(context.Background(), plait.NewWorkflow(wf).Task("a", "ok", nil), opts...)
		must(t, err)
		ids = append(ids, r.ID)
	}
	return ids
}

// failed submits n runs whose only task fails for good and runs them to
// their end, with every other run waiting: call it before submit.
func (e *env) failed(t *testing.T, n int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	for range n {
		r, err := e.s.Submit(ctx, plait.NewWorkflow("broken").Task("charge", "fail", nil))
		must(t, err)
		ids = append(ids, r.ID)
	}
	done := make(chan error, 1)
	go func() { done <- e.s.Run(ctx) }()
	for _, id := range ids {
		if _, err := e.s.RunWait(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	must(t, <-done)
	return ids
}

// notes answers the run notes of a run's stream.
func (e *env) notes(t *testing.T, runID string) []string {
	t.Helper()
	res, err := e.st.EventRead(context.Background(), &store.EventReadParams{RunID: runID, Limit: 1000})
	must(t, err)
	var out []string
	for _, ev := range res.Events {
		if ev.Type == store.EventRunNote {
			out = append(out, ev.Note)
		}
	}
	return out
}

// records is an slog handler that keeps its records.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) attrs(i int) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{"msg": r.recs[i].Message}
	r.recs[i].Attrs(func(a slog.Attr) bool { out[a.Key] = a.Value.String(); return true })
	return out
}

func TestQueryCountEqualsApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.failed(t, 2) // finished: a cancel does not apply to them
	e.submit(t, "etl", 7)
	e.submit(t, "other", 3)
	target := action.Target{Runs: &plait.RunFilter{Workflow: "etl"}}
	c, err := action.Count(ctx, e.s, action.RunCancel, target)
	must(t, err)
	if c.N != 7 || c.Capped {
		t.Fatalf("count %+v, want 7", c)
	}
	all, err := action.Count(ctx, e.s, action.RunCancel, action.Target{Runs: &plait.RunFilter{}})
	must(t, err)
	if all.N != 10 {
		t.Fatalf("count of every cancellable run %d, want 10 (the 2 failed ones left out)", all.N)
	}
	log := &records{}
	rep, err := action.Apply(ctx, e.s, action.RunCancel, target, action.Options{
		Reason: "bad deploy", Actor: "alice", Rate: action.RateMax, Logger: slog.New(log),
	})
	must(t, err)
	if rep.Total != c.N || rep.Done != c.N || rep.Failed != 0 {
		t.Fatalf("report %+v, want %d done", rep, c.N)
	}
	for _, it := range rep.Items {
		r, err := e.s.RunGet(ctx, it.ID)
		must(t, err)
		if r.Status != plait.RunCancelled || r.Workflow != "etl" {
			t.Fatalf("run %s is %s of %s", r.ID, r.Status, r.Workflow)
		}
		if n := e.notes(t, it.ID); len(n) != 1 || n[0] != "run.cancel by alice: bad deploy" {
			t.Fatalf("notes of %s: %q", it.ID, n)
		}
	}
	if len(log.recs) != 1 {
		t.Fatalf("%d audit records, want 1", len(log.recs))
	}
	a := log.attrs(0)
	if a["msg"] != action.AuditMessage || a["actor"] != "alice" || a["action"] != "run.cancel" ||
		a["count"] != "7" || a["done"] != "7" || a["reason"] != "bad deploy" {
		t.Fatalf("audit record %v", a)
	}
	// A query naming statuses the action does not apply to matches nothing.
	none, err := action.Count(ctx, e.s, action.RunCancel, action.Target{Runs: &plait.RunFilter{Statuses: []plait.RunStatus{plait.RunFailed}}})
	must(t, err)
	if none.N != 0 {
		t.Fatalf("cancel of failed runs counted %d", none.N)
	}
	failedOnly, err := action.Count(ctx, e.s, action.RunDelete, action.Target{Runs: &plait.RunFilter{Statuses: []plait.RunStatus{plait.RunFailed, plait.RunPending}}})
	must(t, err)
	if failedOnly.N != 2 {
		t.Fatalf("delete of failed or pending runs counted %d, want the 2 failed", failedOnly.N)
	}
	after, err := action.Count(ctx, e.s, action.RunCancel, target)
	must(t, err)
	if after.N != 0 {
		t.Fatalf("count after the cancel %d, want 0", after.N)
	}
}

func TestDeadLetterQueryCountEqualsPurge(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.failed(t, 5)
	for key, want := range map[string]int{"card declined": 5, "card declined #": 0} {
		c, err := action.Count(ctx, e.s, action.DeadLetterPurge, action.Target{DeadLetters: &action.DeadLetterFilter{ErrorKey: key}})
		must(t, err)
		if c.N != want {
			t.Fatalf("letters of group %q: %d, want %d", key, c.N, want)
		}
	}
	target := action.Target{DeadLetters: &action.DeadLetterFilter{ErrorPrefix: "card"}}
	c, err := action.Count(ctx, e.s, action.DeadLetterPurge, target)
	must(t, err)
	if c.N != 5 {
		t.Fatalf("count %d, want 5", c.N)
	}
	rep, err := action.Apply(ctx, e.s, action.DeadLetterPurge, target, action.Options{Reason: "known", Rate: action.RateMax, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	if rep.Done != c.N {
		t.Fatalf("purged %d, counted %d", rep.Done, c.N)
	}
	c, err = action.Count(ctx, e.s, action.DeadLetterPurge, target)
	must(t, err)
	if c.N != 0 {
		t.Fatalf("count after the purge %d", c.N)
	}
}

func TestRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.submit(t, "etl", 3)
	quiet := slog.New(slog.DiscardHandler)
	q := action.Target{Runs: &plait.RunFilter{}}
	if _, err := action.Apply(ctx, e.s, action.RunCancel, q, action.Options{Logger: quiet}); !errors.Is(err, action.ErrReasonRequired) || !errors.Is(err, plait.ErrInvalidArgument) {
		t.Fatalf("a query without a reason: %v", err)
	}
	var tm *action.TooManyError
	if _, err := action.Apply(ctx, e.s, action.RunCancel, q, action.Options{Reason: "r", Max: 2, Logger: quiet}); !errors.As(err, &tm) || tm.Count.N != 3 {
		t.Fatalf("a query over max: %v", err)
	}
	for name, tc := range map[string]struct {
		a action.Action
		t action.Target
		o action.Options
	}{
		"unknown action": {"run.explode", action.Target{IDs: ids}, action.Options{}},
		"no target":      {action.RunCancel, action.Target{}, action.Options{}},
		"two forms":      {action.RunCancel, action.Target{IDs: ids, Runs: &plait.RunFilter{}}, action.Options{Reason: "r"}},
		"refs for queue": {action.QueuePause, action.Target{Refs: []action.Ref{{RunID: ids[0], Task: "a"}}}, action.Options{}},
		"rate too high":  {action.RunCancel, action.Target{IDs: ids}, action.Options{Rate: action.RateMax + 1}},
		"backfill range": {action.ScheduleBackfill, action.Target{IDs: []string{"x"}}, action.Options{}},
	} {
		if _, err := action.Apply(ctx, e.s, tc.a, tc.t, tc.o); !errors.Is(err, plait.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	for _, id := range ids {
		r, err := e.s.RunGet(ctx, id)
		must(t, err)
		if r.Status.Terminal() {
			t.Fatalf("run %s was acted on by a refused call", id)
		}
	}
}

func TestSelectionSkips(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	done := e.failed(t, 1)
	open := e.submit(t, "etl", 2)
	target := action.Target{IDs: []string{open[0], done[0], "nope", open[1], open[0]}}
	c, err := action.Count(ctx, e.s, action.RunCancel, target)
	must(t, err)
	if c.N != 2 || c.Skipped != 2 {
		t.Fatalf("count %+v, want 2 and 2 skipped", c)
	}
	rep, err := action.Apply(ctx, e.s, action.RunCancel, target, action.Options{Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	if rep.Done != 2 || len(rep.Skipped) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, sk := range rep.Skipped {
		want := action.ErrNotApplicable
		if sk.ID == "nope" {
			want = plait.ErrNotFound
		}
		if !errors.Is(sk.Err, want) {
			t.Fatalf("skipped %s: %v, want %v", sk.ID, sk.Err, want)
		}
	}
	// A task control on a task of a cancelled run is not applicable.
	c, err = action.Count(ctx, e.s, action.TaskSkip, action.Target{Refs: []action.Ref{{RunID: open[0], Task: "a"}}})
	must(t, err)
	if c.N != 0 || c.Skipped != 1 {
		t.Fatalf("skip of a cancelled task counted %+v", c)
	}
}

func TestTaskAndLetterActions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.submit(t, "etl", 2)
	quiet := slog.New(slog.DiscardHandler)
	rep, err := action.Apply(ctx, e.s, action.TaskSkip, action.Target{Refs: []action.Ref{{RunID: ids[0], Task: "a"}}}, action.Options{Reason: "not needed", Logger: quiet})
	must(t, err)
	if rep.Done != 1 {
		t.Fatalf("skip: %+v %v", rep, rep.Items)
	}
	r, err := e.s.RunGet(ctx, ids[0])
	must(t, err)
	if r.Task("a").Status != plait.TaskSkipped || r.Task("a").Error != "not needed" {
		t.Fatalf("task after skip: %+v", r.Task("a"))
	}
	failed := e.failed(t, 2)
	refs := []action.Ref{{RunID: failed[0], Task: "charge"}, {RunID: failed[1], Task: "charge"}}
	rep, err = action.Apply(ctx, e.s, action.DeadLetterRequeue, action.Target{Refs: refs}, action.Options{Reason: "fixed", Logger: quiet})
	must(t, err)
	if rep.Done != 2 || rep.Noted != 2 {
		t.Fatalf("requeue: %+v", rep)
	}
	r, err = e.s.RunGet(ctx, failed[0])
	must(t, err)
	if r.Generation != 1 || r.Status.Terminal() {
		t.Fatalf("requeued run: generation %d, %s", r.Generation, r.Status)
	}
}

func TestRateHeld(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.submit(t, "etl", 12)
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	progress := 0
	type out struct {
		rep *action.Report
		err error
	}
	res := make(chan out, 1)
	go func() {
		rep, err := action.Apply(ctx, e.s, action.RunNote, action.Target{IDs: ids}, action.Options{
			Reason: "audit", Rate: 4, Clock: clk, Logger: slog.New(slog.DiscardHandler),
			Progress: func(done, total int) { mu.Lock(); progress = done; mu.Unlock() },
		})
		res <- out{rep, err}
	}()
	done := func() int { mu.Lock(); defer mu.Unlock(); return progress }
	// At 4 per second, item k is due at k/4 s: after each quarter second
	// exactly one more item has gone, never two.
	for k := 1; k < len(ids); k++ {
		if !clk.WaitForTimers(1, nil) {
			t.Fatal("no timer")
		}
		if got := done(); got != k {
			t.Fatalf("%d items done at %v, want %d", got, time.Duration(k-1)*250*time.Millisecond, k)
		}
		clk.Advance(249 * time.Millisecond)
		if got := done(); got != k {
			t.Fatalf("%d items done before their time, want %d", got, k)
		}
		clk.Advance(time.Millisecond)
	}
	o := <-res
	must(t, o.err)
	if o.rep.Done != len(ids) {
		t.Fatalf("done %d", o.rep.Done)
	}
	if elapsed := clk.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); elapsed != 11*250*time.Millisecond {
		t.Fatalf("elapsed %v", elapsed)
	}
}

// A caller that gives up stops the action where it is; the report and the
// audit record say how far it went.
func TestApplyStopsWithContext(t *testing.T) {
	e := newEnv(t)
	ids := e.submit(t, "etl", 3)
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	log := &records{}
	type out struct {
		rep *action.Report
		err error
	}
	res := make(chan out, 1)
	go func() {
		rep, err := action.Apply(ctx, e.s, action.RunCancel, action.Target{IDs: ids}, action.Options{Rate: 1, Clock: clk, Logger: slog.New(log)})
		res <- out{rep, err}
	}()
	if !clk.WaitForTimers(1, nil) {
		t.Fatal("no timer")
	}
	cancel()
	o := <-res
	if !errors.Is(o.err, context.Canceled) || o.rep == nil || o.rep.Done != 1 || o.rep.Total != 3 {
		t.Fatalf("report %+v, err %v", o.rep, o.err)
	}
	if len(log.recs) != 1 || log.attrs(0)["done"] != "1" || log.attrs(0)["error"] == "" {
		t.Fatalf("audit %v", log.attrs(0))
	}
}
