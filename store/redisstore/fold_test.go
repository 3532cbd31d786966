package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// foldSide is one run of the fold scenario: a store writing one format
// version, with a clock of its own that starts where the other side's
// does, so both runs see the same times.
type foldSide struct {
	s   *Store
	clk *fakeclock.Clock
	c   *redis.Client
	id  string
}

// foldWorkflow has a task for each way an attempt ends: a plain success,
// a retry then a success, a failure, a timed-out failure, a success with
// error text, and two children, one of the success and one of the failure
// (which a replay of the failure resets, succeeded).
func foldWorkflow() *store.WorkflowSpec {
	task := func(name string, deps ...store.Dep) store.TaskSpec {
		return store.TaskSpec{Name: name, Handler: "h", Queue: "q-" + name, Deps: deps}
	}
	return &store.WorkflowSpec{Name: "fold", Strategy: store.StrategyContinue, Tasks: []store.TaskSpec{
		task("ok"), task("retry"), task("fail"), task("timeout"), task("noisy"),
		task("child", store.Dep{Task: "ok", On: store.OnSuccess}),
		task("after", store.Dep{Task: "fail", On: store.OnCompletion}),
	}}
}

func (sd *foldSide) claim(t *testing.T, name string) store.Lease {
	t.Helper()
	sd.clk.Advance(100 * time.Millisecond)
	got, err := sd.s.TaskClaim(context.Background(), &store.TaskClaimParams{WorkerID: "w1.0a1b2c3d",
		Queues: []string{"q-" + name}, Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1, name)
	require.Equal(t, sd.id, got.Tasks[0].Lease.RunID)
	return got.Tasks[0].Lease
}

func (sd *foldSide) finish(t *testing.T, o store.TaskOutcome) {
	t.Helper()
	sd.clk.Advance(250 * time.Millisecond)
	res, err := sd.s.TaskFinish(context.Background(), &store.TaskFinishParams{WorkerID: "w1.0a1b2c3d", Outcomes: []store.TaskOutcome{o}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err, o.Lease.Task)
}

// run does name's next attempt: claimed, a progress report, then ended
// with o (its lease filled in).
func (sd *foldSide) run(t *testing.T, name string, o store.TaskOutcome) {
	t.Helper()
	o.Lease = sd.claim(t, name)
	sd.clk.Advance(50 * time.Millisecond)
	_, err := sd.s.TaskProgress(context.Background(), &store.TaskProgressParams{Reports: []store.ProgressReport{
		{Lease: o.Lease, Value: 0.5, Note: name}}})
	require.NoError(t, err)
	sd.finish(t, o)
}

// generation0 creates the run and ends every task once.
func (sd *foldSide) generation0(t *testing.T) {
	created, err := sd.s.RunCreate(context.Background(), &store.RunCreateParams{Workflow: foldWorkflow()})
	require.NoError(t, err)
	sd.id = created.Run.ID
	sd.run(t, "ok", store.TaskOutcome{Outcome: store.OutcomeSucceeded, Result: []byte("r")})
	sd.run(t, "retry", store.TaskOutcome{Outcome: store.OutcomeRetry, TimedOut: true, Error: "slow", RetryDelay: 2 * time.Second})
	sd.clk.Advance(2 * time.Second)
	sd.run(t, "retry", store.TaskOutcome{Outcome: store.OutcomeSucceeded})
	sd.run(t, "fail", store.TaskOutcome{Outcome: store.OutcomeFailed, Error: "boom"})
	sd.run(t, "timeout", store.TaskOutcome{Outcome: store.OutcomeFailed, TimedOut: true, Error: "late"})
	sd.run(t, "noisy", store.TaskOutcome{Outcome: store.OutcomeSucceeded, Error: "a warning"})
	sd.run(t, "child", store.TaskOutcome{Outcome: store.OutcomeSucceeded})
	sd.run(t, "after", store.TaskOutcome{Outcome: store.OutcomeSucceeded})
}

// generation1 replays the failed tasks (and "after", below "fail") and
// ends them again: "fail" succeeds, "timeout" fails, not timed out.
func (sd *foldSide) replay(t *testing.T) {
	sd.clk.Advance(time.Second)
	res, err := sd.s.RunReplay(context.Background(), &store.RunReplayParams{RunID: sd.id})
	require.NoError(t, err)
	require.Equal(t, []string{"fail", "timeout", "after"}, res.Reset)
}

func (sd *foldSide) generation1(t *testing.T) {
	sd.run(t, "fail", store.TaskOutcome{Outcome: store.OutcomeSucceeded})
	sd.run(t, "timeout", store.TaskOutcome{Outcome: store.OutcomeFailed, Error: "boom again"})
	sd.run(t, "after", store.TaskOutcome{Outcome: store.OutcomeSucceeded})
}

func (sd *foldSide) attempts(t *testing.T) map[string][]store.Attempt {
	t.Helper()
	run, err := sd.s.RunGet(context.Background(), &store.RunGetParams{ID: sd.id})
	require.NoError(t, err)
	out := map[string][]store.Attempt{}
	for _, ti := range run.Tasks {
		out[ti.Name] = ti.Attempts
	}
	return out
}

func (sd *foldSide) history(t *testing.T) map[string][]store.Attempt {
	t.Helper()
	h, err := sd.s.AttemptHistory(context.Background(), &store.AttemptHistoryParams{RunID: sd.id})
	require.NoError(t, err)
	out := map[string][]store.Attempt{}
	for _, th := range h.Tasks {
		out[th.Task] = th.Attempts
	}
	return out
}

// records lists the attempt record fields of the side's run hash.
func (sd *foldSide) records(t *testing.T) []string {
	t.Helper()
	var out []string
	for f := range sd.c.HGetAll(context.Background(), sd.s.keys.run(0, sd.id)).Val() {
		if len(f) > 2 && f[:2] == "a:" {
			out = append(out, f)
		}
	}
	return out
}

// requireSameAttempts compares the attempts of the version 7 run (want)
// and of the version 8 run (got), task by task and field by field.
func requireSameAttempts(t *testing.T, stage string, want, got map[string][]store.Attempt) {
	t.Helper()
	require.Len(t, got, len(want), stage)
	for task, wa := range want {
		ga := got[task]
		require.Len(t, ga, len(wa), "%s: task %s", stage, task)
		for i := range wa {
			w, g := wa[i], ga[i]
			at := func(field string) string {
				return stage + ": task " + task + " attempt " + string(rune('0'+i)) + " " + field
			}
			require.Equal(t, w.Attempt, g.Attempt, at("Attempt"))
			require.Equal(t, w.Epoch, g.Epoch, at("Epoch"))
			require.Equal(t, w.Generation, g.Generation, at("Generation"))
			require.Equal(t, w.Worker, g.Worker, at("Worker"))
			require.Equal(t, w.Node, g.Node, at("Node"))
			require.Equal(t, w.QueuedAt, g.QueuedAt, at("QueuedAt"))
			require.Equal(t, w.StartedAt, g.StartedAt, at("StartedAt"))
			require.Equal(t, w.EndedAt, g.EndedAt, at("EndedAt"))
			require.Equal(t, w.Duration, g.Duration, at("Duration"))
			require.Equal(t, w.Outcome, g.Outcome, at("Outcome"))
			require.Equal(t, w.Error, g.Error, at("Error"))
			require.Equal(t, w.RetryDelay, g.RetryDelay, at("RetryDelay"))
			require.Equal(t, w.Progress, g.Progress, at("Progress"))
			require.Equal(t, w, g, at("(all)"))
		}
	}
}

// TestFoldedAttemptsReadAsRecords: a run of format version 8 writes no
// record for a final attempt that succeeded without error text or failed
// not by its Timeout, and every reader answers the same attempts as for a
// run of version 7 on the same Redis, played with the same clock: RunGet
// at the end, after a replay (which writes the folded attempts of the
// tasks it resets out as records first: the first generation's final
// attempts are kept), at the second end, and AttemptHistory after the
// run's hash expired (its copy h:<run>, whose stale error of a task failed
// then succeeded is not read). On miniredis, whose time the test moves,
// and on a real redis-server, where the run hashes are given 1 ms left.
func TestFoldedAttemptsReadAsRecords(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		m.SetTime(foldStart)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { c.Close() })
		testFoldedAttempts(t, c, func(...*foldSide) { m.FastForward(2 * time.Hour) })
	})
	t.Run("redis-server", func(t *testing.T) {
		c := redistest.Private(t)
		testFoldedAttempts(t, c, func(sides ...*foldSide) {
			for _, sd := range sides {
				require.True(t, c.PExpire(context.Background(), sd.s.keys.run(0, sd.id), time.Millisecond).Val())
			}
			require.Eventually(t, func() bool {
				for _, sd := range sides {
					if c.Exists(context.Background(), sd.s.keys.run(0, sd.id)).Val() != 0 {
						return false
					}
				}
				return true
			}, 10*time.Second, 5*time.Millisecond)
		})
	})
}

// foldStart is the fake clocks' first reading in the fold scenario.
var foldStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func testFoldedAttempts(t *testing.T, c *redis.Client, expire func(...*foldSide)) {
	ctx := context.Background()
	side := func(opts ...Option) *foldSide {
		clk := fakeclock.New(foldStart)
		s, err := New(ctx, c, append([]Option{WithClock(clk), WithLogger(discardLogger()),
			WithRetention(time.Hour), WithHistoryRetention(24 * time.Hour)}, opts...)...)
		require.NoError(t, err)
		return &foldSide{s: s, clk: clk, c: c}
	}
	v7, v8 := side(WithFormatVersion(FormatVersionPrevious)), side()

	v7.generation0(t)
	v8.generation0(t)
	require.ElementsMatch(t, []string{"a:ok:1", "a:retry:1", "a:retry:2", "a:fail:1", "a:timeout:1", "a:noisy:1",
		"a:child:1", "a:after:1"}, v7.records(t), "version 7 writes a record per ended claim")
	require.ElementsMatch(t, []string{"a:retry:1", "a:timeout:1", "a:noisy:1"}, v8.records(t),
		"version 8 folds the final success without error text and the failure not timed out")
	first := v7.attempts(t)
	requireSameAttempts(t, "generation 0", first, v8.attempts(t))
	requireSameAttempts(t, "history of generation 0", v7.history(t), v8.history(t))
	require.Equal(t, "failed", first["fail"][0].Outcome)
	require.Equal(t, "boom", first["fail"][0].Error)

	v7.replay(t)
	v8.replay(t)
	require.Subset(t, v8.records(t), []string{"a:fail:1", "a:after:1"}, "a replay writes the folded attempts of the tasks it resets out")
	replayed := v8.attempts(t)
	requireSameAttempts(t, "after the replay", v7.attempts(t), replayed)
	for _, task := range []string{"fail", "timeout", "after"} {
		require.Equal(t, first[task], replayed[task], "a replayed task keeps its first generation's attempts: %s", task)
	}

	v7.generation1(t)
	v8.generation1(t)
	last := v7.attempts(t)
	requireSameAttempts(t, "generation 1", last, v8.attempts(t))
	require.Len(t, last["fail"], 2)
	require.Equal(t, int64(1), last["fail"][1].Generation)
	require.Empty(t, last["fail"][1].Error)

	expire(v7, v8)
	for _, sd := range []*foldSide{v7, v8} {
		_, err := sd.s.RunGet(ctx, &store.RunGetParams{ID: sd.id})
		require.ErrorIs(t, err, store.ErrNotFound, "the run hash expired")
	}
	history := v7.history(t)
	requireSameAttempts(t, "history after the run expired", history, v8.history(t))
	requireSameAttempts(t, "history against RunGet", last, history)
}

// TestFoldedAttemptGoldenFetch: in the golden run of version 8 the fetch
// task's first attempt keeps its record and its final one, a success, is
// folded into its state, and decodes to what its record held in version 7.
func TestFoldedAttemptGoldenFetch(t *testing.T) {
	g8 := writeGolden(t)
	g7 := writeGolden(t, WithFormatVersion(FormatVersionPrevious))
	require.Contains(t, g8.hash, "a:fetch:1")
	require.NotContains(t, g8.hash, "a:fetch:2")
	require.Contains(t, g7.hash, "a:fetch:2")
	r8, err := decodeRun("1", g8.hash)
	require.NoError(t, err)
	r7, err := decodeRun("1", g7.hash)
	require.NoError(t, err)
	requireSameAttempts(t, "golden", map[string][]store.Attempt{"fetch": r7.Tasks[0].Attempts},
		map[string][]store.Attempt{"fetch": r8.Tasks[0].Attempts})
}
