package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// tripCounter counts round trips: one per command sent on its own, one per
// pipeline.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// trips runs fn and returns how many round trips it made.
func (c *tripCounter) trips(fn func()) int64 {
	before := c.n.Load()
	fn()
	return c.n.Load() - before
}

// TestRoundTripsOnTheHotPath pins the round trips of the hot path: a
// submit is one call (plus one id reservation per 64 runs), a claim of 64
// tasks one, finishing 64 attempts and claiming again one, extending 64
// leases one.
func TestRoundTripsOnTheHotPath(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	counter := &tripCounter{}
	c.AddHook(counter)
	s, err := redisstore.New(ctx, c, redisstore.WithClock(fakeclock.New(start)), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue, Payload: make([]byte, 100)}}}
	create := func(key string) {
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Key: key})
		require.NoError(t, err)
	}
	claim := &store.TaskClaimParams{WorkerID: "w", Limit: 64, LeaseDuration: time.Minute}
	// Warm up: on a server without functions, each script's first call
	// loads it.
	create("")
	create("warm")
	_, err = s.RunCreateMany(ctx, []*store.RunCreateParams{{Workflow: wf}})
	require.NoError(t, err)
	res, err := s.TaskClaim(ctx, claim)
	require.NoError(t, err)
	_, err = s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
		Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(res.Tasks[:1])}, Claim: *claim})
	require.NoError(t, err)
	_, err = s.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: "w", Leases: leases(res.Tasks[1:]), Duration: time.Minute})
	require.NoError(t, err)

	require.Equal(t, int64(128+2), counter.trips(func() {
		for i := 0; i < 128; i++ {
			create("")
		}
	}), "128 submits: one call each, and one id reservation per 64")
	many := make([]*store.RunCreateParams, 300)
	for i := range many {
		many[i] = &store.RunCreateParams{Workflow: wf}
	}
	trips := counter.trips(func() {
		out, err := s.RunCreateMany(ctx, many)
		require.NoError(t, err)
		for _, o := range out {
			require.NoError(t, o.Err)
		}
	})
	// 300 ids span four or five blocks of 64, depending on what the last
	// block had left.
	require.True(t, trips == 2+4 || trips == 2+5, "300 runs at once: two pipelines of up to 256 creates and an id reservation per 64, not %d round trips", trips)
	require.Equal(t, int64(1), counter.trips(func() { create("k-" + strconv.Itoa(1)) }), "a keyed submit is one call")
	require.Equal(t, int64(2), counter.trips(func() { create("k-1") }), "a repeated key: the create finds the key, then the run is read")

	var claimed []*store.ClaimedTask
	require.Equal(t, int64(1), counter.trips(func() {
		r, err := s.TaskClaim(ctx, claim)
		require.NoError(t, err)
		claimed = r.Tasks
	}), "a claim of 64 tasks is one call")
	require.Len(t, claimed, 64)
	require.Equal(t, int64(1), counter.trips(func() {
		_, err := s.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: "w", Leases: leases(claimed), Duration: time.Minute})
		require.NoError(t, err)
	}), "extending 64 leases is one call")
	require.Equal(t, int64(1), counter.trips(func() {
		r, err := s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
			Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded(claimed)}, Claim: *claim})
		require.NoError(t, err)
		require.Len(t, r.Claimed.Tasks, 64)
	}), "finishing 64 attempts and claiming 64 more is one call")
}

func succeeded(ts []*store.ClaimedTask) []store.TaskOutcome {
	out := make([]store.TaskOutcome, len(ts))
	for i, ct := range ts {
		out[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
	}
	return out
}

func leases(ts []*store.ClaimedTask) []store.Lease {
	out := make([]store.Lease, len(ts))
	for i, ct := range ts {
		out[i] = ct.Lease
	}
	return out
}
