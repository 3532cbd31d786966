package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// nameRun is a one-task run of workflow wf for service svc and tenant.
func nameRun(wf, svc, tenant string) *store.RunCreateParams {
	return &store.RunCreateParams{
		Workflow: &store.WorkflowSpec{Name: wf, Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}},
		Service:  svc, Tenant: tenant,
	}
}

// listIDs pages through the runs of f, limit a page, and returns their
// ids in the order listed.
func listIDs(t *testing.T, s *redisstore.Store, f store.RunFilter, limit int) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 1000 {
		res, err := s.RunList(context.Background(), &store.RunListParams{Filter: f, Limit: limit, Cursor: cursor})
		require.NoError(t, err)
		for _, r := range res.Runs {
			out = append(out, r.ID)
		}
		if res.NextCursor == "" {
			return out
		}
		cursor = res.NextCursor
	}
	t.Fatal("the listing never ended")
	return nil
}

// TestNameIndexesAreStreams checks the form of a run's name indexes in
// each format version: format 8 files a run in one stream entry per name
// (a call creating many runs files them in one entry), format 7 in zsets;
// and an entry of many runs goes only with the last of them.
func TestNameIndexesAreStreams(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	typeOf := func(k string) string { return c.Type(ctx, k).Val() }

	old, err := redisstore.New(ctx, c, redisstore.WithPrefix("v7"), redisstore.WithFormatVersion(redisstore.FormatVersionPrevious))
	require.NoError(t, err)
	_, err = old.RunCreate(ctx, nameRun("wf", "svc", "t"))
	require.NoError(t, err)
	for _, k := range []string{"iw:wf", "is:svc", "iu:svc:t", "iv:t"} {
		require.Equal(t, "zset", typeOf("v7:{0}:"+k), k)
		require.Equal(t, "none", typeOf("v7:{0}:x"+k[1:]), k)
	}

	s, err := redisstore.New(ctx, c)
	require.NoError(t, err)
	one, err := s.RunCreate(ctx, nameRun("wf", "svc", "t"))
	require.NoError(t, err)
	for _, k := range []string{"xw:wf", "xs:svc", "xu:svc:t", "xv:t"} {
		require.Equal(t, "stream", typeOf("plait:{0}:"+k), k)
		require.Equal(t, "none", typeOf("plait:{0}:i"+k[1:]), k)
	}
	many := make([]*store.RunCreateParams, 3)
	for i := range many {
		many[i] = nameRun("wf", "", "")
	}
	made, err := s.RunCreateMany(ctx, many)
	require.NoError(t, err)
	entries := func() []redis.XMessage { return c.XRange(ctx, "plait:{0}:xw:wf", "-", "+").Val() }
	require.Len(t, entries(), 2, "one entry for the run created alone, one for the three created in one call")
	require.Len(t, listIDs(t, s, store.RunFilter{Workflow: "wf"}, 1), 4)

	// finish and delete the runs one by one: the shared entry stays until
	// the last of its runs is gone, and the stream with the last entry
	ids := []string{made[0].Result.Run.ID, made[1].Result.Run.ID, made[2].Result.Run.ID, one.Run.ID}
	for _, id := range ids {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
	}
	for i, id := range ids {
		require.NoError(t, s.RunDelete(ctx, &store.RunDeleteParams{ID: id}))
		left := listIDs(t, s, store.RunFilter{Workflow: "wf"}, 2)
		require.ElementsMatch(t, ids[i+1:], left, "after deleting %d", i+1)
		switch {
		case i < 2:
			require.Len(t, entries(), 2, "the shared entry stays while a run of it is left")
		case i == 2:
			require.Len(t, entries(), 1, "the shared entry went with its last run")
		default:
			require.Equal(t, "none", typeOf("plait:{0}:xw:wf"), "an emptied stream is deleted")
		}
	}
}

// TestNameStreamAfterClockStepBack creates a run at an instant before the
// last one its name stream holds (a process whose clock is behind): it is
// filed at the stream's next id and listed by its name all the same.
func TestNameStreamAfterClockStepBack(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	ahead, err := redisstore.New(ctx, c, redisstore.WithClock(fakeclock.New(start)))
	require.NoError(t, err)
	behind, err := redisstore.New(ctx, c, redisstore.WithClock(fakeclock.New(start.Add(-time.Minute))))
	require.NoError(t, err)
	first, err := ahead.RunCreate(ctx, nameRun("wf", "", ""))
	require.NoError(t, err)
	second, err := behind.RunCreate(ctx, nameRun("wf", "", ""))
	require.NoError(t, err)
	got := listIDs(t, ahead, store.RunFilter{Workflow: "wf"}, 1)
	require.ElementsMatch(t, []string{first.Run.ID, second.Run.ID}, got)
}

// TestLostCreateReplyFilesOnce: go-redis sends a create whose reply was
// lost again, with the same ids; the resend finds its runs and writes
// nothing, so each name stream holds one entry for the call, as
// run_create's and run_create_many's headers say.
func TestLostCreateReplyFilesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	e.proxy.DropReplyTo("lost-name-one")
	one, err := e.store.RunCreate(ctx, nameRun("wf", "svc", "lost-name-one"))
	require.NoError(t, err)
	require.Equal(t, 1, e.proxy.Dropped())
	e.proxy.DropReplyTo("lost-name-many")
	many, err := e.store.RunCreateMany(ctx, []*store.RunCreateParams{
		nameRun("wf", "svc", "lost-name-many"), nameRun("wf", "svc", "lost-name-many"),
	})
	require.NoError(t, err)
	require.Equal(t, 2, e.proxy.Dropped())
	for _, k := range []string{"xw:wf", "xs:svc"} {
		require.Len(t, e.direct.XRange(ctx, "plait:{0}:"+k, "-", "+").Val(), 2, "%s: one entry per call", k)
	}
	for _, k := range []string{"xu:svc:lost-name-one", "xv:lost-name-one", "xu:svc:lost-name-many", "xv:lost-name-many"} {
		require.Len(t, e.direct.XRange(ctx, "plait:{0}:"+k, "-", "+").Val(), 1, k)
	}
	got := listIDs(t, e.store, store.RunFilter{Workflow: "wf", Service: "svc"}, 1)
	require.ElementsMatch(t, []string{one.Run.ID, many[0].Result.Run.ID, many[1].Result.Run.ID}, got, "each run listed once")
}
