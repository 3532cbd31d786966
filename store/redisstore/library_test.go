package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// TestLibraryLoads loads the function library on a real redis-server. A
// library that fails to load leaves the store on EVALSHA of each script,
// which works and so hides the failure, at a cost of about half again the
// Redis CPU of a create (every call runs the library's definitions).
func TestLibraryLoads(t *testing.T) {
	c := redistest.Private(t)
	if err := c.FunctionLoad(context.Background(), library).Err(); err != nil {
		t.Fatalf("FUNCTION LOAD: %v", err)
	}
	s, err := New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !s.functions {
		t.Fatal("New did not take the function library")
	}
}

// TestSmallHotZsetsAreSkiplists: the lease zset and the running index hold
// the skiplist pin from their first write, so Redis keeps them in the
// skiplist encoding however few members they have, and readers never see
// the pin: not as a lease the sweep would expire, nor as a running run.
func TestSmallHotZsetsAreSkiplists(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(ctx, c, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	id := createOneTaskRun(t, s)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	if err != nil || len(claimed.Tasks) != 1 {
		t.Fatalf("claim: %v, %+v", err, claimed)
	}
	for _, k := range []string{s.keys.active(0), s.keys.statusIndex(0, "U")} {
		if enc := c.ObjectEncoding(ctx, k).Val(); enc != "skiplist" {
			t.Errorf("%s is a %s", k, enc)
		}
	}
	counts, err := s.RunCount(ctx, &store.RunCountParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got := counts.Counts[store.RunRunning]; got != 1 {
		t.Errorf("running count %d, want 1", got)
	}
	page, err := s.RunList(ctx, &store.RunListParams{Filter: store.RunFilter{Statuses: []store.RunStatus{store.RunRunning}}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 1 || page.Runs[0].ID != id || page.NextCursor != "" {
		t.Errorf("running runs: %d, cursor %q", len(page.Runs), page.NextCursor)
	}
	clk.Advance(2 * time.Minute)
	swept, err := s.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(swept.Requeued) != 1 || len(swept.Dead) != 0 || len(swept.Corrupt) != 0 || swept.More {
		t.Errorf("the sweep of one expired lease: %+v", swept)
	}
}

// createOneTaskRun creates a run of one task "a" and answers its id.
func createOneTaskRun(t *testing.T, s *Store) string {
	t.Helper()
	spec := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	res, err := s.RunCreate(context.Background(), &store.RunCreateParams{Workflow: spec})
	if err != nil {
		t.Fatal(err)
	}
	return res.Run.ID
}
