package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestRunIDsAfterDataLoss empties a real redis-server (FLUSHALL: what a
// restart without persistence or a failover to a lagging replica does to
// the id sequence) under a store value holding part of its id block, then
// creates runs from it and from a new store value: every id is handed out
// once, and every create answers the run it wrote itself.
func TestRunIDsAfterDataLoss(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	newStore := func() *redisstore.Store {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
		require.NoError(t, err)
		return s
	}
	old := newStore()
	created := map[string]string{} // run id -> workflow name its creator submitted
	create := func(s *redisstore.Store, name, key string) {
		t.Helper()
		wf := &store.WorkflowSpec{Name: name, Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Key: key})
		require.NoError(t, err)
		require.False(t, res.Existing)
		_, seen := created[res.Run.ID]
		require.False(t, seen, "run id %s handed out twice", res.Run.ID)
		created[res.Run.ID] = name
	}
	for i := 0; i < 3; i++ {
		create(old, "before-"+strconv.Itoa(i), "")
	}
	require.NoError(t, srv.Client().FlushAll(ctx).Err())

	fresh := newStore()
	for i := 0; i < 5; i++ {
		create(fresh, "fresh-"+strconv.Itoa(i), "")
		create(old, "old-"+strconv.Itoa(i), "")
	}
	create(old, "old-keyed", "order-1")
	create(fresh, "fresh-keyed", "order-2")
	many, err := fresh.RunCreateMany(ctx, []*store.RunCreateParams{
		{Workflow: &store.WorkflowSpec{Name: "many-0", Tasks: []store.TaskSpec{{Name: "t", Handler: "h"}}}},
		{Workflow: &store.WorkflowSpec{Name: "many-1", Tasks: []store.TaskSpec{{Name: "t", Handler: "h"}}}},
	})
	require.NoError(t, err)
	for i, o := range many {
		require.NoError(t, o.Err)
		_, seen := created[o.Result.Run.ID]
		require.False(t, seen, "run id %s handed out twice", o.Result.Run.ID)
		created[o.Result.Run.ID] = "many-" + strconv.Itoa(i)
	}

	// Each id still names the run its creator wrote (the runs created
	// before the loss are gone, not replaced by someone else's).
	for id, name := range created {
		run, err := old.RunGet(ctx, &store.RunGetParams{ID: id})
		if strings.HasPrefix(name, "before-") {
			require.ErrorIs(t, err, store.ErrNotFound, "run %s was lost, and no other run took its id", id)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, name, run.Workflow, "run %s is the one its create answered", id)
	}
}

// TestLeaseAfterDataLoss holds a lease across a FLUSHALL: every lease the
// store hands out afterwards names another run, so the old lease is never
// fenced in again and its writes answer ErrNotFound.
func TestLeaseAfterDataLoss(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	// A process that starts after the loss takes its ids from a counter
	// that starts again.
	later, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "w", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
	claimOne := func(s *redisstore.Store) store.Lease {
		t.Helper()
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w1", Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
		return res.Tasks[0].Lease
	}
	held := claimOne(s)
	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	for i := 0; i < 5; i++ {
		for _, st := range []*redisstore.Store{later, s} {
			l := claimOne(st)
			require.NotEqual(t, held.RunID, l.RunID, "a lease after the loss must not name the lost run")
		}
	}
	ext, err := s.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: "w1", Leases: []store.Lease{held}, Duration: time.Minute})
	require.NoError(t, err)
	require.ErrorIs(t, ext[0].Err, store.ErrNotFound)
	fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w1", Outcomes: []store.TaskOutcome{{Lease: held, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	require.ErrorIs(t, fin[0].Err, store.ErrNotFound)
}
