package redisstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestLostFoldReplyFilesOnce: the reply to a reader's fold is lost and
// go-redis sends the fold again; the resend reads on from the cursor the
// first try moved, so each run is listed once and each name stream holds
// one entry per creating call, as index_fold.lua's header says.
func TestLostFoldReplyFilesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	var want []string
	for range 3 {
		r, err := e.store.RunCreate(ctx, nameRun("wf", "svc", "t"))
		require.NoError(t, err)
		want = append(want, r.Run.ID)
	}
	e.proxy.DropReplyTo("index_fold")
	got := listIDs(t, e.store, store.RunFilter{Workflow: "wf"}, 2)
	require.Equal(t, 1, e.proxy.Dropped(), "the fold's reply was lost")
	require.ElementsMatch(t, want, got, "each run listed once")
	for _, k := range []string{"xw:wf", "xs:svc", "xu:svc:t", "xv:t"} {
		require.Len(t, e.direct.XRange(ctx, "plait:{0}:"+k, "-", "+").Val(), 3, "%s: one entry per creating call", k)
	}
	require.EqualValues(t, 3, e.direct.ZCard(ctx, "plait:{0}:ia").Val())
}

// TestTrimFoldsCreations creates runs one by one with no reader, in a
// stream whose cap is a few dozen of their entries: each trim of the
// stream first files in the indexes the creations it cuts, so no run is
// left out of them, and every run is listed and counted once.
func TestTrimFoldsCreations(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	const eventCap, runs = 100, 400
	s, err := redisstore.New(ctx, c, redisstore.WithEventCap(eventCap))
	require.NoError(t, err)
	for range runs {
		_, err := s.RunCreate(ctx, nameRun("wf", "", ""))
		require.NoError(t, err)
	}
	kept := c.XLen(ctx, "plait:{0}:e").Val()
	filed := c.ZCard(ctx, "plait:{0}:ia").Val()
	t.Logf("FIGURE %d runs created, %d stream entries kept for a cap of %d events, %d runs filed by the trims' folds", runs, kept, eventCap, filed)
	require.Less(t, kept, int64(runs/4), "the stream was trimmed")
	require.GreaterOrEqual(t, filed, runs-kept, "every run whose entry was cut was filed first")
	require.Len(t, listIDs(t, s, store.RunFilter{Workflow: "wf"}, 50), runs)
	res, err := s.RunCount(ctx, &store.RunCountParams{Filter: store.RunFilter{Workflow: "wf"}})
	require.NoError(t, err)
	require.EqualValues(t, runs, res.Counts[store.RunPending])
	all, err := s.RunCount(ctx, &store.RunCountParams{})
	require.NoError(t, err)
	require.EqualValues(t, runs, all.Counts[store.RunPending], "counted from ia")
}

// TestPreviousFormatNeedsNoFold: a store writing format 7 files its runs
// at their creation, and its stream entries journal nothing to fold.
func TestPreviousFormatNeedsNoFold(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithFormatVersion(redisstore.FormatVersionPrevious))
	require.NoError(t, err)
	_, err = s.RunCreate(ctx, nameRun("wf", "", ""))
	require.NoError(t, err)
	require.EqualValues(t, 1, c.ZCard(ctx, "plait:{0}:ia").Val(), "filed at its creation")
	require.EqualValues(t, 1, c.ZCard(ctx, "plait:{0}:iw:wf").Val())
	require.Len(t, listIDs(t, s, store.RunFilter{Workflow: "wf"}, 5), 1)
	require.EqualValues(t, 1, c.ZCard(ctx, "plait:{0}:ia").Val(), "the fold filed nothing twice")
}
