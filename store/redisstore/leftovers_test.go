package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// leftStore is a store on the shared redis-server under a prefix of its
// own, on the system clock, with the client that reads its keys.
func leftStore(t *testing.T, opts ...redisstore.Option) (*redisstore.Store, *redis.Client, string) {
	t.Helper()
	requireServer(t)
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	t.Cleanup(func() { c.Close() })
	prefix := "left" + strconv.FormatInt(prefixes.Add(1), 10)
	opts = append([]redisstore.Option{redisstore.WithPrefix(prefix), redisstore.WithLogger(quietLogger())}, opts...)
	s, err := redisstore.New(context.Background(), c, opts...)
	require.NoError(t, err)
	return s, c, prefix
}

// runKeys lists the keys whose name holds run id, with their TTL.
func runKeys(c *redis.Client, prefix, id string) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, l := range redisLeftovers(c, prefix)(id) {
		if k, ok := strings.CutPrefix(l, "key "); ok {
			out[k] = c.PTTL(context.Background(), k).Val()
		}
	}
	return out
}

// apartTask is a task whose payload is kept apart, in p:<run>:<task>.
func apartTask(name string, deps ...string) store.TaskSpec {
	ts := store.TaskSpec{Name: name, Handler: "h", Payload: longPayload}
	for _, d := range deps {
		ts.Deps = append(ts.Deps, store.Dep{Task: d})
	}
	return ts
}

// claimAll claims every ready task and returns their leases by name.
func claimAll(t *testing.T, s *redisstore.Store) map[string]store.Lease {
	t.Helper()
	got, err := s.TaskClaim(context.Background(), &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	out := map[string]store.Lease{}
	for _, ct := range got.Tasks {
		out[ct.Lease.Task] = ct.Lease
	}
	return out
}

// finishWith applies one outcome and requires it applied.
func finishWith(t *testing.T, s *redisstore.Store, o store.TaskOutcome) {
	t.Helper()
	res, err := s.TaskFinish(context.Background(), &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{o}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
}

// TestRunKeysGetTheirTTLOnEveryEnd ends a run whose payloads are kept
// apart in each way a run ends, on a real redis-server, and requires every
// key naming the run to have a time to live once it has ended: the run
// hash, its payload keys, its log, its dead-letter list, its idempotency
// key (named by its key, not the run) aside.
func TestRunKeysGetTheirTTLOnEveryEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cancel := func(t *testing.T, s *redisstore.Store, id string) {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id, Reason: "stop"})
		require.NoError(t, err)
	}
	delayed := apartTask("a")
	delayed.Delay = time.Hour
	onFailure := apartTask("cleanup")
	onFailure.Deps = []store.Dep{{Task: "a", On: store.OnFailure}}
	cases := []struct {
		name     string
		strategy store.ErrorStrategy
		tasks    []store.TaskSpec
		end      func(t *testing.T, s *redisstore.Store, id string)
	}{
		{"CancelledReadyAndPending", store.StrategyContinue, []store.TaskSpec{apartTask("a"), apartTask("b", "a")}, cancel},
		{"CancelledDelayed", store.StrategyContinue, []store.TaskSpec{delayed}, cancel},
		{"CancelledRetrying", store.StrategyContinue, []store.TaskSpec{apartTask("a")}, func(t *testing.T, s *redisstore.Store, id string) {
			finishWith(t, s, store.TaskOutcome{Lease: claimAll(t, s)["a"], Outcome: store.OutcomeRetry, RetryDelay: time.Hour})
			cancel(t, s, id)
		}},
		{"CancelledRunning", store.StrategyContinue, []store.TaskSpec{apartTask("a"), apartTask("b")}, func(t *testing.T, s *redisstore.Store, id string) {
			finishWith(t, s, store.TaskOutcome{Lease: claimAll(t, s)["b"], Outcome: store.OutcomeSucceeded})
			cancel(t, s, id)
		}},
		{"SucceededWithSkipped", store.StrategyContinue, []store.TaskSpec{apartTask("a"), onFailure}, func(t *testing.T, s *redisstore.Store, id string) {
			finishWith(t, s, store.TaskOutcome{Lease: claimAll(t, s)["a"], Outcome: store.OutcomeSucceeded})
		}},
		{"Failed", store.StrategyContinue, []store.TaskSpec{apartTask("a"), apartTask("b", "a")}, func(t *testing.T, s *redisstore.Store, id string) {
			finishWith(t, s, store.TaskOutcome{Lease: claimAll(t, s)["a"], Outcome: store.OutcomeFailed, Error: "boom"})
		}},
		{"Stopped", store.StrategyStop, []store.TaskSpec{apartTask("a"), apartTask("b")}, func(t *testing.T, s *redisstore.Store, id string) {
			finishWith(t, s, store.TaskOutcome{Lease: claimAll(t, s)["a"], Outcome: store.OutcomeFailed, Error: "boom"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, client, prefix := leftStore(t, redisstore.WithRetention(time.Hour))
			res, err := s.RunCreate(ctx, &store.RunCreateParams{Key: "k", Workflow: &store.WorkflowSpec{Name: "wf", Strategy: c.strategy, Tasks: c.tasks}})
			require.NoError(t, err)
			id := res.Run.ID
			c.end(t, s, id)
			run, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
			require.NoError(t, err)
			require.True(t, run.Status.Terminal(), "the run has ended")
			keys := runKeys(client, prefix, id)
			require.Contains(t, keys, prefix+":{0}:r:"+id)
			for k, ttl := range keys {
				require.Positive(t, ttl, "%s has no time to live after the run ended %s", k, run.Status)
			}
		})
	}
}

// TestCancelledRunExpiresWhole cancels runs with a task ready, delayed and
// running, each with its payload kept apart, under a 1 s retention on a
// real redis-server and the system clock: once the retention has passed,
// no key naming any of them is left.
func TestCancelledRunExpiresWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, client, prefix := leftStore(t, redisstore.WithRetention(time.Second))
	delayed := apartTask("a")
	delayed.Delay = time.Hour
	var ids []string
	for _, ts := range []store.TaskSpec{apartTask("a"), delayed, apartTask("a")} {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{ts}}})
		require.NoError(t, err)
		ids = append(ids, res.Run.ID)
	}
	got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1, "the first ready task runs")
	for _, id := range ids {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id, Reason: "stop"})
		require.NoError(t, err)
	}
	// Every key of a cancelled run carries the run's retention, so each
	// goes within it (Redis expires keys lazily and by sampling, hence a
	// wait on the condition); a key left without a TTL never goes.
	for _, id := range ids {
		require.Eventually(t, func() bool { return len(runKeys(client, prefix, id)) == 0 },
			10*time.Second, 50*time.Millisecond, "keys of cancelled run %s left after its retention", id)
	}
}
