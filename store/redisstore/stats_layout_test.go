package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// onBothServers runs fn on a client of miniredis and of the shared
// redis-server, each with a prefix of its own.
func onBothServers(t *testing.T, fn func(t *testing.T, c redis.UniversalClient, prefix string)) {
	t.Helper()
	for name, client := range map[string]func(t *testing.T) redis.UniversalClient{
		"miniredis": func(t *testing.T) redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		},
		"redis-server": func(t *testing.T) redis.UniversalClient {
			if server.addr == "" {
				redistest.Skip(t, errString(server.missing))
			}
			return redis.NewClient(&redis.Options{Addr: server.addr})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := client(t)
			t.Cleanup(func() { _ = c.Close() })
			fn(t, c, "stats"+strconv.FormatInt(prefixes.Add(1), 10))
		})
	}
}

// openOn opens a store on prefix with opts.
func openOn(c redis.UniversalClient, prefix string, opts ...redisstore.Option) (*redisstore.Store, error) {
	return redisstore.New(context.Background(), c, append([]redisstore.Option{redisstore.WithPrefix(prefix), redisstore.WithLogger(quietLogger())}, opts...)...)
}

// runOneTask creates a one-task run on s, claims and succeeds it.
func runOneTask(t *testing.T, s *redisstore.Store) {
	t.Helper()
	ctx := context.Background()
	wf := &store.WorkflowSpec{Name: "wf", Strategy: store.StrategyContinue, Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	res, err := s.TaskFinish(ctx, &store.TaskFinishParams{Outcomes: []store.TaskOutcome{{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
}

// TestStatsFollowThePrefix: a store opened without WithStats on a prefix
// first used with them answers StoreStats, and counts its own transitions
// where every reader sees them.
func TestStatsFollowThePrefix(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		ctx := context.Background()
		first, err := openOn(c, prefix, redisstore.WithStats(0))
		require.NoError(t, err)
		second, err := openOn(c, prefix)
		require.NoError(t, err, "a store without WithStats joins a prefix with stats")
		_, err = second.StoreStats(ctx, &store.StoreStatsParams{})
		require.NoError(t, err, "and answers StoreStats: stats are the prefix's")

		runOneTask(t, second)
		for name, s := range map[string]*redisstore.Store{"the first store": first, "the second store": second} {
			got, err := s.StoreStats(ctx, &store.StoreStatsParams{})
			require.NoError(t, err, name)
			require.Equal(t, store.StatCounters{Submitted: 1, Succeeded: 1}, got.Queues[store.DefaultQueue],
				"%s reads the transitions of the store without WithStats", name)
			require.Len(t, got.Durations["a"], 1, name)
		}
	})
}

// TestStatsOffFollowThePrefix: a prefix first used without stats keeps
// them off for a store that does not ask for them.
func TestStatsOffFollowThePrefix(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		_, err := openOn(c, prefix)
		require.NoError(t, err)
		s, err := openOn(c, prefix)
		require.NoError(t, err)
		_, err = s.StoreStats(context.Background(), &store.StoreStatsParams{})
		require.ErrorIs(t, err, store.ErrUnsupported)
	})
}
