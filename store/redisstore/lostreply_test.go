package redisstore_test

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/faultproxy"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// faultEnv is a private redis-server, a fault proxy in front of it, a store
// reaching the server through the proxy, and a direct client to inspect
// the server with.
type faultEnv struct {
	srv    *redistest.Server
	proxy  *faultproxy.Proxy
	direct *redis.Client
	clk    *fakeclock.Clock
	store  *redisstore.Store
}

// newFaultEnv starts the server with extra arguments; retries is the
// MaxRetries of the store's client (-1: none, so a lost reply reaches the
// caller).
func newFaultEnv(t *testing.T, retries int, extra []string, opts ...redisstore.Option) *faultEnv {
	t.Helper()
	srv, err := redistest.Start(extra...)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	proxy, err := faultproxy.Start(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: retries})
	t.Cleanup(func() { _ = c.Close() })
	direct := srv.Client()
	t.Cleanup(func() { _ = direct.Close() })
	clk := fakeclock.New(time.Now())
	opts = append([]redisstore.Option{redisstore.WithClock(clk), redisstore.WithLogger(quietLogger())}, opts...)
	s, err := redisstore.New(context.Background(), c, opts...)
	require.NoError(t, err)
	return &faultEnv{srv: srv, proxy: proxy, direct: direct, clk: clk, store: s}
}

// createOneTaskRuns creates n runs of one task each and returns their ids.
func (e *faultEnv) createOneTaskRuns(t *testing.T, n int) []string {
	t.Helper()
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue, Payload: []byte("p")}}}
	out := make([]string, n)
	for i := range out {
		res, err := e.store.RunCreate(context.Background(), &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		out[i] = res.Run.ID
	}
	return out
}

// activeLeases lists the lease entries of every shard, sorted.
func (e *faultEnv) activeLeases(t *testing.T, shards int) []string {
	t.Helper()
	var out []string
	for s := 0; s < shards; s++ {
		// Not the skiplist pin, scored +inf.
		es, err := e.direct.ZRangeByScore(context.Background(), "plait:{"+strconv.Itoa(s)+"}:active", &redis.ZRangeBy{Min: "-inf", Max: "(+inf"}).Result()
		require.NoError(t, err)
		out = append(out, es...)
	}
	sort.Strings(out)
	return out
}

func leaseEntries(ts []*store.ClaimedTask) []string {
	out := make([]string, len(ts))
	for i, ct := range ts {
		out[i] = ct.Lease.RunID + " " + ct.Lease.Task
	}
	sort.Strings(out)
	return out
}

// auditRuns checks what the fault suites audit: every run ended
// completed, each task has one attempt record per epoch it was finished
// under, with epochs strictly increasing, and no crash was charged.
func (e *faultEnv) auditRuns(t *testing.T, ids []string) {
	t.Helper()
	for _, id := range ids {
		run, err := e.store.RunGet(context.Background(), &store.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, store.RunCompleted, run.Status, "run %s", id)
		for _, ti := range run.Tasks {
			require.Zero(t, ti.Crashes, "run %s task %s: no crash charged", id, ti.Name)
			prev := int64(0)
			for _, a := range ti.Attempts {
				require.Greater(t, a.Epoch, prev, "run %s task %s: epochs strictly increase", id, ti.Name)
				prev = a.Epoch
			}
		}
	}
}

// TestLostClaimReply loses the reply of a claim and of a finish-claim on
// a real redis-server: the call sent again with the same request id gets
// the same tasks under the same epochs, nothing else is claimed, and a
// sweep after the leases finds nothing to charge once they are finished.
func TestLostClaimReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	ids := e.createOneTaskRuns(t, 5)

	// go-redis resends the claim whose reply was lost.
	e.proxy.DropReplyTo("claim-req-1")
	claim := &store.TaskClaimParams{WorkerID: "w", Limit: 2, LeaseDuration: time.Minute, RequestID: "claim-req-1"}
	first, err := e.store.TaskClaim(ctx, claim)
	require.NoError(t, err)
	require.Equal(t, 1, e.proxy.Dropped(), "the claim's reply was lost once")
	require.Len(t, first.Tasks, 2)
	require.Equal(t, leaseEntries(first.Tasks), e.activeLeases(t, 1), "the resent claim claimed nothing new")
	for _, ct := range first.Tasks {
		require.Equal(t, int64(1), ct.Lease.Epoch)
		require.Equal(t, "p", string(ct.Spec.Payload), "the answer is read again whole")
	}
	// The caller may send it again too, for as long as the leases last.
	again, err := e.store.TaskClaim(ctx, claim)
	require.NoError(t, err)
	require.Equal(t, leaseEntries(first.Tasks), leaseEntries(again.Tasks))
	require.Equal(t, first.Tasks[0].Lease, again.Tasks[0].Lease)

	// The finish-claim's reply is lost and the client does not resend it:
	// the caller sends the call again itself.
	e2 := &faultEnv{proxy: e.proxy, direct: e.direct, clk: e.clk}
	c2 := redis.NewClient(&redis.Options{Addr: e.proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c2.Close() })
	e2.store, err = redisstore.New(ctx, c2, redisstore.WithClock(e.clk), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	fc := &store.TaskFinishClaimParams{
		Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(first.Tasks)},
		Claim:  store.TaskClaimParams{WorkerID: "w", Limit: 2, LeaseDuration: time.Minute, RequestID: "fc-req-1"},
	}
	e.proxy.DropReplyTo("fc-req-1")
	_, err = e2.store.TaskFinishClaim(ctx, fc)
	require.Error(t, err, "the reply was lost")
	require.Equal(t, 2, e.proxy.Dropped())
	res, err := e2.store.TaskFinishClaim(ctx, fc)
	require.NoError(t, err)
	for _, f := range res.Finished {
		require.NoError(t, f.Err, "the outcomes are answered as the first call applied them, not as stale")
		require.Equal(t, store.RunCompleted, f.RunStatus)
	}
	require.Len(t, res.Claimed.Tasks, 2)
	require.Equal(t, leaseEntries(res.Claimed.Tasks), e.activeLeases(t, 1), "nothing else was claimed")

	// The worker finishes what it holds; the leases run out; the sweep
	// finds nothing to charge.
	rest, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(res.Claimed.Tasks)})
	require.NoError(t, err)
	for _, f := range rest {
		require.NoError(t, f.Err)
	}
	e.clk.Advance(2 * time.Minute)
	sw, err := e.store.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 100, CrashLimit: 3})
	require.NoError(t, err)
	require.Empty(t, sw.Requeued)
	require.Empty(t, sw.Dead)
	last, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, last.Tasks, 1, "the one run nobody claimed is still there")
	_, err = e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(last.Tasks)})
	require.NoError(t, err)
	e.auditRuns(t, ids)
}

// TestLostClaimReplyShards loses a claim's reply on one of several shards:
// the claim sent again visits the shards in the same order, answers what
// each claimed, and claims nothing new.
func TestLostClaimReplyShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, -1, nil, redisstore.WithShards(3))
	ids := e.createOneTaskRuns(t, 9)
	claim := &store.TaskClaimParams{WorkerID: "w", Limit: 5, LeaseDuration: time.Minute, RequestID: "multi-1"}
	e.proxy.DropReplyTo("multi-1")
	_, err := e.store.TaskClaim(ctx, claim)
	require.Error(t, err, "the first shard's reply was lost")
	held := e.activeLeases(t, 3)
	res, err := e.store.TaskClaim(ctx, claim)
	require.NoError(t, err)
	require.Len(t, res.Tasks, 5)
	require.Equal(t, leaseEntries(res.Tasks), e.activeLeases(t, 3), "nothing beyond the limit was claimed")
	require.Subset(t, leaseEntries(res.Tasks), held, "the tasks of the lost reply are answered")
	again, err := e.store.TaskClaim(ctx, claim)
	require.NoError(t, err)
	require.Equal(t, leaseEntries(res.Tasks), leaseEntries(again.Tasks))
	require.Equal(t, leaseEntries(res.Tasks), e.activeLeases(t, 3))

	for {
		_, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(res.Tasks)})
		require.NoError(t, err)
		res, err = e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 5, LeaseDuration: time.Minute})
		require.NoError(t, err)
		if len(res.Tasks) == 0 {
			break
		}
	}
	e.auditRuns(t, ids)
}

func TestRequestIDValidated(t *testing.T) {
	t.Parallel()
	s := newMiniredisHarness(t).Store
	ctx := context.Background()
	for _, rid := range []string{"a b", "a:b", "x{y}", string(make([]byte, 65))} {
		_, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute, RequestID: rid})
		require.ErrorIs(t, err, store.ErrInvalidArgument, "%q", rid)
		_, err = s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{Claim: store.TaskClaimParams{RequestID: rid}})
		require.ErrorIs(t, err, store.ErrInvalidArgument, "%q", rid)
	}
	_, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute,
		RequestID: "A-z_0.9"})
	require.NoError(t, err)
}
