package plait_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestRollingUpgradeAcrossFormatVersions upgrades a fleet on one prefix
// while its runs are in flight. First the fleet is of the previous release:
// processes creating and working on runs in format version
// FormatVersionPrevious, which the new code writes exactly as that release
// did (TestGoldenRecordsPrevious pins it byte for byte); one of them is
// already upgraded and runs with WithFormatVersion(FormatVersionPrevious),
// as the upgrade guide says. Halfway through their runs, every process is
// replaced by one of the new release writing FormatVersionNewest, which
// creates new runs while the old ones drain. Every run of either version
// completes, each attempt of each task runs once, every handler sees its
// payload and its parents' results, and RunGet, RunList and each run's
// attempts read both versions alike. While the option is on, no run of
// the newer version is created: a process of the previous release never
// meets one.
func TestRollingUpgradeAcrossFormatVersions(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	prefix := redisstore.WithPrefix("up")
	open := func(opts ...redisstore.Option) *redisstore.Store {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = c.Close() })
		st, err := redisstore.New(ctx, c, append([]redisstore.Option{prefix}, opts...)...)
		require.NoError(t, err)
		return st
	}
	previous := redisstore.WithFormatVersion(redisstore.FormatVersionPrevious)

	// The handlers: "a" fails its first attempt (an attempt record that did
	// not end the task), then returns its payload; "b" and "c" read it.
	var mu sync.Mutex
	calls := map[string]int{}
	var seen []string
	gate := make(chan struct{})
	halfway := make(chan string, 64)
	handlers := func(s *plait.Scheduler) {
		require.NoError(t, s.Handle("a", func(ctx context.Context, task *plait.Task) (any, error) {
			mu.Lock()
			calls[task.RunID+" a "+strconv.Itoa(task.Attempt)]++
			mu.Unlock()
			if task.Attempt == 1 {
				return nil, plait.RetryAfter(time.Millisecond, errors.New("first attempt"))
			}
			var p string
			if err := task.Decode(&p); err != nil {
				return nil, plait.Permanent(err)
			}
			return p, nil
		}))
		for _, name := range []string{"b", "c"} {
			require.NoError(t, s.Handle(name, func(ctx context.Context, task *plait.Task) (any, error) {
				var p, parent string
				if err := task.Decode(&p); err != nil {
					return nil, plait.Permanent(err)
				}
				if err := task.ParentResult("a", &parent); err != nil {
					return nil, plait.Permanent(err)
				}
				if task.Name == "c" && strings.HasPrefix(p, "old") {
					// The old runs wait here for the upgrade.
					select {
					case <-gate:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				mu.Lock()
				calls[task.RunID+" "+task.Name+" "+strconv.Itoa(task.Attempt)]++
				seen = append(seen, task.RunID+" "+task.Name+" "+p+" "+parent)
				mu.Unlock()
				if task.Name == "b" && strings.HasPrefix(p, "old") {
					halfway <- task.RunID
				}
				return p, nil
			}))
		}
	}
	workflow := func(tag string, i int) *plait.Workflow {
		// Payloads of each size: short, and longer than a compact hash value.
		long := tag + strings.Repeat(" payload", 12) + " " + strconv.Itoa(i)
		return plait.NewWorkflow("up").
			Task("a", "a", tag+" a "+strconv.Itoa(i), plait.Retry(1)).
			Task("b", "b", long, plait.After("a"), plait.Retry(0)).
			Task("c", "c", tag+" c", plait.After("a"), plait.Retry(0))
	}
	submit := func(st *redisstore.Store, tag string, n int) []string {
		s, err := plait.New(st, plait.WithRemoteHandlers())
		require.NoError(t, err)
		subs := make([]plait.Submission, n)
		for i := range subs {
			subs[i] = plait.Submission{Workflow: workflow(tag, i)}
		}
		out, err := s.SubmitMany(ctx, subs)
		require.NoError(t, err)
		ids := make([]string, n)
		for i, r := range out {
			ids[i] = r.ID
		}
		return ids
	}
	version := func(id string) byte {
		v, err := admin.HGet(ctx, "up:{0}:r:"+id, "i").Result()
		require.NoError(t, err)
		return v[0]
	}

	// The previous release's fleet, one process already upgraded; each has
	// room for every old run's c to wait at the gate while the rest runs.
	oldStore, upgradedStore := open(previous), open(previous)
	oldRuns := submit(oldStore, "old", 20)
	var fleet []*worker
	for i, st := range []*redisstore.Store{oldStore, upgradedStore} {
		w := newWorker(t, st, "old"+strconv.Itoa(i), plait.WithConcurrency(32))
		handlers(w.s)
		w.start(t)
		fleet = append(fleet, w)
	}
	// Every old run is half way: its b is done, its c waits at the gate.
	for range oldRuns {
		select {
		case <-halfway:
		case <-time.After(30 * time.Second):
			t.Fatal("the old runs did not get half way")
		}
	}
	for _, id := range oldRuns {
		require.Equal(t, byte(redisstore.FormatVersionPrevious), version(id), "run %s, created with the option", id)
	}

	// The upgrade: the new release's processes join and create runs, the
	// previous ones finish what they hold and stop, and what is left of the
	// old runs drains on the new fleet.
	newStore := open()
	for i := 0; i < 2; i++ {
		w := newWorker(t, open(), "new"+strconv.Itoa(i), plait.WithConcurrency(4))
		handlers(w.s)
		w.start(t)
		fleet = append(fleet, w)
	}
	newRuns := submit(newStore, "new", 20)
	close(gate)
	fleet[0].stop(t)
	fleet[1].stop(t)

	for _, id := range append(append([]string{}, oldRuns...), newRuns...) {
		run := waitRun(t, newStore, id)
		require.Equal(t, plait.RunCompleted, run.Status, "run %s", id)
		for _, ti := range run.Tasks {
			want := 1
			if ti.Name == "a" {
				want = 2
			}
			require.Len(t, ti.Attempts, want, "run %s task %s", id, ti.Name)
			last := ti.Attempts[want-1]
			require.Equal(t, "succeeded", last.Outcome, "run %s task %s", id, ti.Name)
			require.Equal(t, ti.Attempt, last.Attempt, "run %s task %s", id, ti.Name)
			require.False(t, last.StartedAt.IsZero(), "run %s task %s", id, ti.Name)
			require.False(t, last.EndedAt.Before(last.StartedAt), "run %s task %s", id, ti.Name)
			require.NotEmpty(t, last.Worker, "run %s task %s", id, ti.Name)
			if ti.Name == "a" {
				require.Equal(t, "retry", ti.Attempts[0].Outcome, "run %s", id)
				require.Equal(t, "first attempt", ti.Attempts[0].Error, "run %s", id)
			}
		}
	}
	for _, id := range newRuns {
		require.Equal(t, byte(redisstore.FormatVersionNewest), version(id), "run %s, created by the new release", id)
	}
	mu.Lock()
	for key, n := range calls {
		require.Equal(t, 1, n, "%s runs once", key)
	}
	require.Len(t, seen, 2*(len(oldRuns)+len(newRuns)))
	for _, s := range seen {
		f := strings.SplitN(s, " ", 3)
		tag := "old"
		if strings.HasPrefix(f[2], "new") {
			tag = "new"
		}
		require.Contains(t, f[2], tag+" a ", "%s: the parent's result is its run's", s)
	}
	mu.Unlock()
	s, err := plait.New(newStore, plait.WithRemoteHandlers())
	require.NoError(t, err)
	page, err := s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Workflow: "up", Statuses: []plait.RunStatus{plait.RunCompleted}}, Limit: 100})
	require.NoError(t, err)
	require.Len(t, page.Runs, len(oldRuns)+len(newRuns), fmt.Sprintf("runs of both versions listed: %d", len(page.Runs)))
	// The workflow index in both of its forms: the old runs' zset, the new
	// runs' stream; paged through, counted, each run once.
	require.Equal(t, "zset", admin.Type(ctx, "up:{0}:iw:up").Val())
	require.Equal(t, "stream", admin.Type(ctx, "up:{0}:xw:up").Val())
	listed := map[string]bool{}
	cursor := ""
	for {
		page, err := s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Workflow: "up"}, Limit: 7, Cursor: cursor})
		require.NoError(t, err)
		for _, r := range page.Runs {
			require.False(t, listed[r.ID], "run %s listed twice", r.ID)
			listed[r.ID] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	require.Len(t, listed, len(oldRuns)+len(newRuns))
	counted, err := s.RunCount(ctx, plait.RunCountParams{Filter: plait.RunFilter{Workflow: "up"}})
	require.NoError(t, err)
	require.Equal(t, int64(len(oldRuns)+len(newRuns)), counted.Counts[plait.RunCompleted])
}
