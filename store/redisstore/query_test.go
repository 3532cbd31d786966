package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

var _ store.QueryStore = (*redisstore.Store)(nil)

// finishAll claims and settles every ready task: the runs whose number is
// a multiple of three fail (a dead letter each), the others succeed.
func finishAll(t *testing.T, s *redisstore.Store) {
	t.Helper()
	ctx := context.Background()
	for {
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute})
		require.NoError(t, err)
		if len(res.Tasks) == 0 {
			return
		}
		outs := make([]store.TaskOutcome, len(res.Tasks))
		for i, ct := range res.Tasks {
			if i%2 == 0 {
				// Every other attempt logs a line, so the run has a log
				// hash that retention and pruning must remove too.
				_, err := s.TaskLogAppend(ctx, &store.TaskLogAppendParams{Lease: ct.Lease, Attempt: ct.Attempt, Seq: 1,
					Lines: []store.LogLine{{Time: start, Level: 0, Text: "working on it"}}})
				require.NoError(t, err)
			}
			outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
			if i%3 == 0 {
				outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "boom"}
			}
		}
		fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
		require.NoError(t, err)
		for _, f := range fin {
			require.NoError(t, f.Err)
		}
	}
}

// pruneAll runs the janitor's step until nothing is due.
func pruneAll(t *testing.T, s *redisstore.Store) int {
	t.Helper()
	total := 0
	for {
		res, err := s.RunPrune(context.Background(), &store.RunPruneParams{Limit: 100})
		require.NoError(t, err)
		total += res.Pruned
		if !res.More {
			return total
		}
	}
}

// After retention, and the janitor's pruning, a real redis-server holds
// exactly the keys it held before the runs (DBSIZE) and its used_memory is
// back to its baseline, within what the server's own tables keep. Runs of
// every kind are there: keyed, with dead letters, with task log lines, cancelled, over four
// shards and several services, tenants and workflows, with a retention
// rule per status.
func TestRetentionReturnsRedisToBaseline(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	clk := fakeclock.New(start)
	s, err := redisstore.New(ctx, c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()), redisstore.WithShards(4),
		redisstore.WithRetention(time.Hour), redisstore.WithRetentionFor("", store.RunCancelled, time.Minute))
	require.NoError(t, err)

	create := func(n int, prefix string) []string {
		var ids []string
		for i := 0; i < n; i++ {
			wf := &store.WorkflowSpec{Name: "wf" + strconv.Itoa(i%3), Tasks: []store.TaskSpec{
				{Name: "a", Handler: "h", Payload: make([]byte, 100)}, {Name: "b", Handler: "h", Deps: []store.Dep{{Task: "a"}}}}}
			p := &store.RunCreateParams{Workflow: wf, Service: "svc" + strconv.Itoa(i%2), Tenant: "t" + strconv.Itoa(i%5)}
			if i%4 == 0 {
				p.Key = prefix + strconv.Itoa(i)
			}
			res, err := s.RunCreate(ctx, p)
			require.NoError(t, err)
			ids = append(ids, res.Run.ID)
		}
		return ids
	}
	// Warm up: scripts loaded, the sequence and shard keys that outlive
	// runs (wake lists) exist.
	create(8, "warm")
	finishAll(t, s)
	finishAll(t, s)
	clk.Advance(2 * time.Hour)
	pruneAll(t, s)
	baseKeys, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	baseMem := usedMemory(t, c)

	ids := create(2000, "k")
	for i, id := range ids {
		if i%7 == 0 {
			_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
			require.NoError(t, err)
		}
	}
	finishAll(t, s)
	finishAll(t, s)
	peakKeys, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	peakMem := usedMemory(t, c)
	counts, err := s.RunCount(ctx, &store.RunCountParams{})
	require.NoError(t, err)
	require.Equal(t, int64(len(ids)), counts.Counts[store.RunCompleted]+counts.Counts[store.RunFailed]+counts.Counts[store.RunCancelled])

	clk.Advance(time.Minute + time.Millisecond)
	require.Equal(t, int(counts.Counts[store.RunCancelled]), pruneAll(t, s), "cancelled runs go after their status rule's minute")
	clk.Advance(time.Hour)
	pruneAll(t, s)

	keys, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	mem := usedMemory(t, c)
	t.Logf("keys: base %d, peak %d, after %d; used_memory: base %d, peak %d (+%d), after %d (+%d)",
		baseKeys, peakKeys, keys, baseMem, peakMem, peakMem-baseMem, mem, mem-baseMem)
	require.Equal(t, baseKeys, keys, "every key of every run is gone")
	require.Less(t, mem-baseMem, (peakMem-baseMem)/20, "used_memory is back to its baseline, but for the server's own tables")
	counts, err = s.RunCount(ctx, &store.RunCountParams{})
	require.NoError(t, err)
	require.Empty(t, counts.Counts)
}

// A status filter on a service index over several shards, where most runs
// are in other statuses, lists exactly the matching runs newest first: the
// reader merges shards, and a shard whose scan ran out of budget bounds the
// page (short pages carry a cursor) instead of letting a run be skipped.
func TestFilteredQueryAcrossShardsPastTheBudget(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	clk := fakeclock.New(start)
	m.SetTime(start)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()), redisstore.WithShards(2))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	var want []string
	params := make([]*store.RunCreateParams, 0, 4000)
	for i := 0; i < 4000; i++ {
		params = append(params, &store.RunCreateParams{Workflow: wf, Service: "svc"})
	}
	outs, err := s.RunCreateMany(ctx, params)
	require.NoError(t, err)
	for i, o := range outs {
		require.NoError(t, o.Err)
		if i%900 == 5 || i == 3999 {
			_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: o.Result.Run.ID})
			require.NoError(t, err)
			want = append(want, o.Result.Run.ID)
		}
		if i%100 == 0 {
			clk.Advance(time.Millisecond)
		}
	}
	var got []string
	var last time.Time
	cursor := ""
	pages := 0
	for {
		res, err := s.RunList(ctx, &store.RunListParams{Filter: store.RunFilter{Service: "svc", Statuses: []store.RunStatus{store.RunCancelled}}, Limit: 2, Cursor: cursor})
		require.NoError(t, err)
		pages++
		for _, r := range res.Runs {
			require.Equal(t, store.RunCancelled, r.Status)
			require.True(t, last.IsZero() || !r.CreatedAt.After(last), "newest first")
			last = r.CreatedAt
			got = append(got, r.ID)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
		require.Less(t, pages, 100)
	}
	require.Len(t, got, len(want))
	require.ElementsMatch(t, want, got)
	require.Greater(t, pages, 3, "the budget cut some pages short")
}
