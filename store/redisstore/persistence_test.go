package redisstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// These tests kill redis-server with SIGKILL under load, with its
// append-only file on, and restart it on the same directory (the load and
// the checks: persistence_load_test.go).

// TestKillWithAppendFsyncAlways kills redis-server running with
// appendfsync always under load and restarts it on the same directory:
// every create and finish the store acknowledged before the kill is
// there, no run is half applied, and every run then completes.
//
// It fails if a script's writes reached clients before the append-only
// file (an acknowledged write lost), or were not applied as one (a
// half-applied run).
func TestKillWithAppendFsyncAlways(t *testing.T) {
	t.Parallel()
	requireServer(t)
	srv, err := redistest.Start("--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	clk := fakeclock.New(time.Now())
	l := startPersistLoad(t, srv.Addr, clk)
	l.waitCreated(t, 300)
	require.NoError(t, srv.Kill())
	l.halt()
	require.NoError(t, srv.Restart())

	c := srv.Client()
	t.Cleanup(func() { _ = c.Close() })
	st, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	found, foundFinishes := 0, 0
	for id := range l.created {
		if _, err := st.RunGet(context.Background(), &store.RunGetParams{ID: id}); err == nil {
			found++
		}
	}
	for key, epoch := range l.finished {
		run, task, _ := cutRun(key)
		r, err := st.RunGet(context.Background(), &store.RunGetParams{ID: run})
		require.NoError(t, err)
		for _, a := range r.Task(task).Attempts {
			if a.Epoch == epoch && a.Outcome == "succeeded" {
				foundFinishes++
			}
		}
	}
	created, finished := len(l.created), len(l.finished)
	runs, half := check(t, c, st)
	rerun, twice := drain(t, l, st, clk)
	t.Logf("FIGURE persistence always: kill -9 under load: %d/%d acknowledged creates found, %d/%d acknowledged finishes found; %d runs read, %d half applied; after the restart %d finished tasks ran again, %d runs completed twice",
		found, created, foundFinishes, finished, runs, len(half), rerun, twice)
	require.Equal(t, created, found, "no acknowledged create is lost")
	require.Equal(t, finished, foundFinishes, "no acknowledged finish is lost")
	require.Empty(t, half, "no run is half applied")
	require.Zero(t, rerun, "no finished task runs again")
	require.Zero(t, twice)
	_, half = check(t, c, st)
	require.Empty(t, half)
	assertAllCompleted(t, c, st)
}

// assertAllCompleted checks that every run in the store completed.
func assertAllCompleted(t *testing.T, c *redis.Client, st *redisstore.Store) {
	t.Helper()
	ids, err := c.ZRange(context.Background(), "plait:{0}:ia", 0, -1).Result()
	require.NoError(t, err)
	for _, id := range ids {
		r, err := st.RunGet(context.Background(), &store.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, store.RunCompleted, r.Status, "run %s", id)
	}
}

// TestOSCrashWithAppendFsyncEverysec simulates an OS crash under
// appendfsync everysec, which loses what the kernel had not yet written to
// disk, about the last second: it copies the append-only directory under
// load, lets the load go on for a second, kills redis-server with SIGKILL,
// puts the copy back and restarts. Every write acknowledged before the
// copy is there; what was acknowledged after may be lost (measured); no
// run is half applied, since each script's writes sit in the file as one
// MULTI/EXEC block, which Redis drops whole when the file ends inside it;
// and every run then completes, finished tasks the crash rolled back
// running again (measured).
//
// It fails if a script's writes were split in the file (a run half
// applied after the restore), or if a run the crash rolled back could not
// be finished (a task left running with no lease entry, say).
func TestOSCrashWithAppendFsyncEverysec(t *testing.T) {
	t.Parallel()
	requireServer(t)
	srv, err := redistest.Start("--appendonly", "yes", "--appendfsync", "everysec")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	clk := fakeclock.New(time.Now())
	l := startPersistLoad(t, srv.Addr, clk)
	l.waitCreated(t, 300)

	l.mu.Lock()
	createdBefore := make(map[string]bool, len(l.created))
	for id := range l.created {
		createdBefore[id] = true
	}
	finishedBefore := make(map[string]int64, len(l.finished))
	for k, e := range l.finished {
		finishedBefore[k] = e
	}
	l.mu.Unlock()
	aof := filepath.Join(srv.Dir(), "appendonlydir")
	saved := t.TempDir()
	require.NoError(t, copyDir(aof, saved))
	// The second everysec can lose: the load goes on for it, then the
	// machine "crashes" with only the copy on its disk.
	window := time.NewTimer(time.Second)
	<-window.C
	require.NoError(t, srv.Kill())
	l.halt()
	require.NoError(t, os.RemoveAll(aof))
	require.NoError(t, copyDir(saved, aof))
	require.NoError(t, srv.Restart())

	c := srv.Client()
	t.Cleanup(func() { _ = c.Close() })
	st, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	ctx := context.Background()
	lostBefore, lostAfter := 0, 0
	for id := range l.created {
		if _, err := st.RunGet(ctx, &store.RunGetParams{ID: id}); err != nil {
			require.ErrorIs(t, err, store.ErrNotFound)
			if createdBefore[id] {
				lostBefore++
			} else {
				lostAfter++
			}
		}
	}
	finishesLost := 0
	for key, epoch := range finishedBefore {
		run, task, _ := cutRun(key)
		r, err := st.RunGet(ctx, &store.RunGetParams{ID: run})
		require.NoError(t, err)
		found := false
		for _, a := range r.Task(task).Attempts {
			found = found || (a.Epoch == epoch && a.Outcome == "succeeded")
		}
		if !found {
			finishesLost++
		}
	}
	created := len(l.created)
	runs, half := check(t, c, st)
	rerun, twice := drain(t, l, st, clk)
	t.Logf("FIGURE persistence everysec: OS crash 1 s after the AOF copy: %d acknowledged creates, %d of them after the copy; acknowledged runs lost %d (%d acknowledged before the copy); acknowledged finishes before the copy lost %d of %d; %d runs read, half applied %d; after the restart %d finished tasks ran again, runs completed twice %d",
		created, created-len(createdBefore), lostBefore+lostAfter, lostBefore, finishesLost, len(finishedBefore), runs, len(half), rerun, twice)
	require.Zero(t, lostBefore, "a write acknowledged before the copy is in it")
	require.Zero(t, finishesLost, "a finish acknowledged before the copy is in it")
	require.Empty(t, half, "no run is half applied")
	_, half = check(t, c, st)
	require.Empty(t, half)
	assertAllCompleted(t, c, st)
}
