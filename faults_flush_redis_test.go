package plait_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestScriptsFlushedMidRun empties Redis's script memory again and again
// while two workers drain runs, from inside handlers, so finishes and
// claims meet it empty: FUNCTION FLUSH on the function path (the store's
// library gone: its calls answer "Function not found"), and SCRIPT FLUSH
// on the EVALSHA path (a user refused the FUNCTION command, so the store
// runs its scripts as EVALSHA, which answers NOSCRIPT). Each time the
// store loads its scripts again and the call goes through: every run
// completes, each task once, with one attempt.
//
// It fails if a call that finds the library or the script cache empty is
// not reloaded and retried (the finish would fail, be retried until the
// lease ran out and the task ran twice), or reloaded only at New.
func TestScriptsFlushedMidRun(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"functions", "evalsha"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			srv, err := redistest.Start()
			if err != nil {
				redistest.Skip(t, err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			admin := srv.Client()
			t.Cleanup(func() { _ = admin.Close() })
			ctx := context.Background()
			opts := &redis.Options{Addr: srv.Addr}
			flush := func() error { return admin.FunctionFlush(ctx).Err() }
			if path == "evalsha" {
				require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "nofn", "on", ">pw", "~*", "&*", "+@all", "-function").Err())
				opts.Username, opts.Password = "nofn", "pw"
				flush = func() error { return admin.ScriptFlush(ctx).Err() }
			}
			prefix := redisstore.WithPrefix("fl")
			dc := redis.NewClient(opts)
			t.Cleanup(func() { _ = dc.Close() })
			direct, err := redisstore.New(ctx, dc, prefix)
			require.NoError(t, err)

			const runs, every = 30, 4
			var mu sync.Mutex
			calls := map[string]int{}
			var seen, flushes atomic.Int32
			var workers []*worker
			for i := 0; i < 2; i++ {
				c := redis.NewClient(opts)
				t.Cleanup(func() { _ = c.Close() })
				st, err := redisstore.New(ctx, c, prefix)
				require.NoError(t, err)
				w := newWorker(t, st, "w"+strconv.Itoa(i), plait.WithConcurrency(4))
				require.NoError(t, w.s.Handle("step", func(ctx context.Context, task *plait.Task) (any, error) {
					mu.Lock()
					calls[task.RunID+" "+task.Name]++
					mu.Unlock()
					if seen.Add(1)%every == 0 {
						// The finish of this task, and the claims after it,
						// find the scripts gone.
						if err := flush(); err != nil {
							return nil, err
						}
						flushes.Add(1)
					}
					return task.Name, nil
				}))
				workers = append(workers, w)
			}
			if path == "evalsha" {
				libs, err := admin.FunctionList(ctx, redis.FunctionListQuery{}).Result()
				require.NoError(t, err)
				require.Empty(t, libs, "the user without FUNCTION runs the scripts as EVALSHA")
			}
			s, err := plait.New(direct, plait.WithRemoteHandlers())
			require.NoError(t, err)
			subs := make([]plait.Submission, runs)
			for i := range subs {
				subs[i] = plait.Submission{Workflow: plait.NewWorkflow("flush").
					Task("a", "step", nil, plait.Retry(0)).
					Task("b", "step", nil, plait.After("a"), plait.Retry(0)).
					Task("c", "step", nil, plait.After("a"), plait.Retry(0))}
			}
			out, err := s.SubmitMany(ctx, subs)
			require.NoError(t, err)
			// The reloads, from the server's command counts: FUNCTION LOAD
			// on the function path, EVAL (the fallback on NOSCRIPT) on the
			// other.
			cmd, reload := "FUNCTION FLUSH", "function|load"
			if path == "evalsha" {
				cmd, reload = "SCRIPT FLUSH", "eval"
			}
			loadsBefore := commandCalls(t, admin, reload)
			for _, w := range workers {
				w.start(t)
			}
			for _, r := range out {
				run := waitRun(t, direct, r.ID)
				require.Equal(t, plait.RunCompleted, run.Status)
				mu.Lock()
				for _, ti := range run.Tasks {
					require.Equal(t, 1, calls[r.ID+" "+ti.Name], "run %s task %s runs once", r.ID, ti.Name)
					require.Len(t, ti.Attempts, 1, "run %s task %s", r.ID, ti.Name)
					require.Zero(t, ti.Crashes)
				}
				mu.Unlock()
			}
			for _, w := range workers {
				require.Zero(t, w.events.count(is(plait.EventTaskLeaseLost, "")))
			}
			require.Greater(t, flushes.Load(), int32(5), "the scripts were flushed mid-run")
			reloads := commandCalls(t, admin, reload) - loadsBefore
			require.Greater(t, reloads, 0, "the scripts were loaded again")
			t.Logf("FIGURE script flush (%s): %s %d times mid-run, from handlers; scripts loaded again %d times (%s); %d runs of 3 tasks completed, each task once, 0 lost",
				path, cmd, flushes.Load(), reloads, reload, runs)
		})
	}
}

// commandCalls reads how many times the server ran command (as INFO
// commandstats names it: "eval", "function|load").
func commandCalls(t *testing.T, c *redis.Client, command string) int {
	t.Helper()
	stats, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	_, rest, ok := strings.Cut(stats, "cmdstat_"+command+":calls=")
	if !ok {
		return 0
	}
	n, _, _ := strings.Cut(rest, ",")
	v, err := strconv.Atoi(n)
	require.NoError(t, err)
	return v
}
