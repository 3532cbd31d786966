package redisstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestEvictionPolicyHidden(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t) // answers neither CONFIG GET nor INFO memory
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	var logs syncBuffer
	_, err := redisstore.New(context.Background(), c, redisstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err, "a hidden policy only warns")
	require.Contains(t, logs.String(), "cannot read the server's maxmemory-policy")

	_, err = redisstore.New(context.Background(), c, redisstore.WithStrictEviction(), redisstore.WithLogger(quietLogger()))
	require.ErrorIs(t, err, redisstore.ErrEvictionPolicy, "strict mode refuses a policy it cannot confirm")
}

// TestEvictionAndOOM runs a private redis-server: an evicting policy is
// reported, and a server out of memory answers ErrStoreFull with nothing
// half-written.
func TestEvictionAndOOM(t *testing.T) {
	t.Parallel()
	requireServer(t)
	addr, stop, err := runRedisServer("--maxmemory-policy", "allkeys-lru")
	require.NoError(t, err)
	t.Cleanup(stop)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })

	var logs syncBuffer
	_, err = redisstore.New(ctx, c, redisstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	require.Contains(t, logs.String(), "allkeys-lru", "an evicting policy is logged loudly")
	_, err = redisstore.New(ctx, c, redisstore.WithStrictEviction(), redisstore.WithLogger(quietLogger()))
	require.ErrorIs(t, err, redisstore.ErrEvictionPolicy)

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	s, err := redisstore.New(ctx, c, redisstore.WithStrictEviction(), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)

	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h", Queue: store.DefaultQueue},
		{Name: "b", Handler: "h", Queue: store.DefaultQueue, Deps: []store.Dep{{Task: "a"}}},
	}}
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	before, err := s.RunGet(ctx, &store.RunGetParams{ID: created.Run.ID})
	require.NoError(t, err)
	keysBefore, err := c.DBSize(ctx).Result()
	require.NoError(t, err)

	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { c.ConfigSet(ctx, "maxmemory", "0") })
	_, err = s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.ErrorIs(t, err, store.ErrStoreFull, "a create refused for memory is ErrStoreFull")
	_, err = s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.ErrorIs(t, err, store.ErrStoreFull, "a claim refused for memory is ErrStoreFull")
	after, err := s.RunGet(ctx, &store.RunGetParams{ID: created.Run.ID})
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing was half-written")
	keysAfter, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, keysBefore, keysAfter, "no key was added")

	// A finish is declared allow-oom: in-flight work keeps completing,
	// whole.
	res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
		{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded, Result: []byte("r")},
	}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "0").Err())
	after, err = s.RunGet(ctx, &store.RunGetParams{ID: created.Run.ID})
	require.NoError(t, err)
	require.Equal(t, store.TaskSucceeded, after.Task("a").Status)
	require.Equal(t, store.TaskReady, after.Task("b").Status, "the finish released the child in the same step")
}
