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
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// handoffStores runs fn on miniredis and, when there is one, on the shared
// redis-server, each with a store of its own prefix and the raw client.
func handoffStores(t *testing.T, fn func(t *testing.T, s *redisstore.Store, c *redis.Client, prefix string)) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { c.Close() })
		s, err := redisstore.New(context.Background(), c, redisstore.WithClock(fakeclock.New(start)), redisstore.WithLogger(quietLogger()))
		require.NoError(t, err)
		fn(t, s, c, "plait")
	})
	t.Run("server", func(t *testing.T) {
		requireServer(t)
		c := redis.NewClient(&redis.Options{Addr: server.addr})
		t.Cleanup(func() { c.Close() })
		prefix := "t" + strconv.FormatInt(prefixes.Add(1), 10)
		s, err := redisstore.New(context.Background(), c, redisstore.WithClock(fakeclock.New(start)), redisstore.WithPrefix(prefix),
			redisstore.WithLogger(quietLogger()))
		require.NoError(t, err)
		fn(t, s, c, prefix)
	})
}

// TestHandoffKeepsTheList pins what a finish-claim leaves behind when it
// takes a task it released without pushing its entry first: the ready
// list holds exactly what a push and a pop would have left, in order, and
// the queue is registered as a push to its empty list registers it.
func TestHandoffKeepsTheList(t *testing.T) {
	ctx := context.Background()
	claim := func(limit int, queues ...string) store.TaskClaimParams {
		return store.TaskClaimParams{WorkerID: "w", Queues: queues, Limit: limit, LeaseDuration: time.Minute}
	}
	finishClaim := func(t *testing.T, s *redisstore.Store, done *store.ClaimedTask, c store.TaskClaimParams) []store.Lease {
		t.Helper()
		res, err := s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
			Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded([]*store.ClaimedTask{done})}, Claim: c})
		require.NoError(t, err)
		require.NoError(t, res.Finished[0].Err)
		return leases(res.Claimed.Tasks)
	}
	after := []store.Dep{{Task: "a", On: store.OnSuccess}}

	t.Run("EmptyList", func(t *testing.T) {
		handoffStores(t, func(t *testing.T, s *redisstore.Store, c *redis.Client, prefix string) {
			wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
				{Name: "a", Handler: "h", Queue: store.DefaultQueue},
				{Name: "b", Handler: "h", Queue: "hop", Deps: after},
			}}
			r, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
			require.NoError(t, err)
			res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
			require.NoError(t, err)
			require.Len(t, res.Tasks, 1)
			got := finishClaim(t, s, res.Tasks[0], claim(4, store.DefaultQueue, "hop"))
			require.Equal(t, []store.Lease{{RunID: r.Run.ID, Task: "b", Epoch: 1}}, got, "the released task is claimed at once")
			n, err := c.LLen(ctx, prefix+":{0}:q:hop:1").Result()
			require.NoError(t, err)
			require.Zero(t, n, "nothing is left on the list")
			ql, err := s.QueueList(ctx, &store.QueueListParams{Limit: 10})
			require.NoError(t, err)
			var names []string
			for _, q := range ql.Queues {
				names = append(names, q.Name)
			}
			require.Contains(t, names, "hop", "the queue is registered as its first push registers it")
		})
	})

	t.Run("BehindOlderWork", func(t *testing.T) {
		handoffStores(t, func(t *testing.T, s *redisstore.Store, c *redis.Client, prefix string) {
			wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
				{Name: "a", Handler: "h", Queue: store.DefaultQueue},
				{Name: "b", Handler: "h", Queue: store.DefaultQueue, Deps: after},
				{Name: "c", Handler: "h", Queue: store.DefaultQueue, Deps: after},
				{Name: "d", Handler: "h", Queue: store.DefaultQueue, Deps: after},
			}}
			r, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
			require.NoError(t, err)
			res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
			require.NoError(t, err)
			require.Len(t, res.Tasks, 1)
			older, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "one",
				Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}})
			require.NoError(t, err)
			got := finishClaim(t, s, res.Tasks[0], claim(2))
			require.Equal(t, []store.Lease{{RunID: older.Run.ID, Task: "a", Epoch: 1}, {RunID: r.Run.ID, Task: "b", Epoch: 1}}, got,
				"older ready work first, then the released tasks in order")
			left, err := c.LRange(ctx, prefix+":{0}:q:default:1", 0, -1).Result()
			require.NoError(t, err)
			require.Equal(t, []string{r.Run.ID + " c", r.Run.ID + " d"}, left, "the tasks not taken wait on the list, in order")
		})
	})
}
