package redisstore_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// fill sets maxmemory a little above the memory in use and writes filler
// keys until Redis refuses one: the server is full.
func (e *faultEnv) fill(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	info, err := e.direct.Info(ctx, "memory").Result()
	require.NoError(t, err)
	used := int64(0)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			used, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
	}
	require.Positive(t, used)
	require.NoError(t, e.direct.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+256<<10, 10)).Err())
	filler := strings.Repeat("x", 16<<10)
	for i := 0; ; i++ {
		err := e.direct.Set(ctx, "filler:"+strconv.Itoa(i), filler, 0).Err()
		if err != nil {
			require.Contains(t, err.Error(), "OOM")
			return
		}
		require.Less(t, i, 10000, "Redis never refused a write")
	}
}

// TestFullRedis runs a real redis-server into maxmemory under noeviction:
// extending, finishing, cancelling and sweeping keep working, creates and
// claims are refused with ErrStoreFull and write nothing, and once memory
// is freed claims and creates work again by themselves.
func TestFullRedis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	ids := e.createOneTaskRuns(t, 6)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 4, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 4)
	extendMe, finishMe, sweepMe, cancelMe := claimed.Tasks[0], claimed.Tasks[1], claimed.Tasks[2], claimed.Tasks[3]

	e.fill(t)
	keys, err := e.direct.DBSize(ctx).Result()
	require.NoError(t, err)

	_, err = e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf",
		Tasks: []store.TaskSpec{{Name: "t", Handler: "h"}}}})
	require.ErrorIs(t, err, store.ErrStoreFull, "a create is refused")
	_, err = e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 4, LeaseDuration: time.Minute})
	require.ErrorIs(t, err, store.ErrStoreFull, "a claim is refused")
	after, err := e.direct.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, keys, after, "the refused create and claim wrote no key")

	e.clk.Advance(30 * time.Second)
	ext, err := e.store.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: "w", Duration: time.Minute,
		Leases: []store.Lease{extendMe.Lease, finishMe.Lease, cancelMe.Lease}})
	require.NoError(t, err, "an extend runs when Redis is full")
	for _, r := range ext {
		require.NoError(t, r.Err)
		require.True(t, r.Until.After(extendMe.LeaseUntil))
	}
	fin, err := e.store.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
		Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: finishMe.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("r")}}},
		Claim:  store.TaskClaimParams{WorkerID: "w", Limit: 4, LeaseDuration: time.Minute, RequestID: "full-1"},
	})
	require.NoError(t, err, "a finish runs when Redis is full")
	require.NoError(t, fin.Finished[0].Err)
	require.Equal(t, store.RunCompleted, fin.Finished[0].RunStatus)
	require.Empty(t, fin.Claimed.Tasks, "its claim part claims nothing")
	_, err = e.store.RunCancel(ctx, &store.RunCancelParams{ID: cancelMe.Lease.RunID, Reason: "stop"})
	require.NoError(t, err, "a cancel runs when Redis is full")
	e.clk.Advance(45 * time.Second) // sweepMe's lease is out, the extended ones are not
	sw, err := e.store.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
	require.NoError(t, err, "a sweep runs when Redis is full")
	require.Equal(t, []store.Lease{sweepMe.Lease}, sw.Requeued)

	// Memory frees: work resumes without anyone stepping in.
	require.NoError(t, e.direct.ConfigSet(ctx, "maxmemory", "0").Err())
	more := e.createOneTaskRuns(t, 1)
	rest, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, rest.Tasks, 4, "the two never claimed, the swept one and the new one")
	res, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w",
		Outcomes: append(succeeded(rest.Tasks), store.TaskOutcome{Lease: extendMe.Lease, Outcome: store.OutcomeSucceeded})})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	for _, id := range append(ids, more...) {
		run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: id})
		require.NoError(t, err)
		want := store.RunCompleted
		if id == cancelMe.Lease.RunID {
			want = store.RunCancelled
		}
		require.Equal(t, want, run.Status, "run %s", id)
		prev := int64(0)
		for _, a := range run.Tasks[0].Attempts {
			require.Greater(t, a.Epoch, prev, "run %s: epochs strictly increase", id)
			prev = a.Epoch
		}
	}
}

// TestOversizeResult finishes a batch of three whose middle result is over
// the store's limit, on a real redis-server that refuses arguments over
// 1 MB: that outcome alone is answered ErrResultTooLarge and keeps its
// lease, and the other two apply.
func TestOversizeResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, []string{"--proto-max-bulk-len", "1mb"}, redisstore.WithMaxResultBytes(1<<20))
	ids := e.createOneTaskRuns(t, 6)
	big := bytes.Repeat([]byte("b"), 2<<20)
	for _, finishClaim := range []bool{false, true} {
		claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 3, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, 3)
		outs := succeeded(claimed.Tasks)
		outs[1].Result = big
		var res []store.TaskFinishResult
		if finishClaim {
			fc, err := e.store.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
				Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: outs}})
			require.NoError(t, err)
			res = fc.Finished
		} else {
			res, err = e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
			require.NoError(t, err, "one oversize result does not fail the batch")
		}
		require.NoError(t, res[0].Err)
		require.ErrorIs(t, res[1].Err, store.ErrResultTooLarge)
		require.NoError(t, res[2].Err)
		run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: claimed.Tasks[1].Lease.RunID})
		require.NoError(t, err)
		require.Equal(t, store.TaskRunning, run.Tasks[0].Status, "nothing applied for the oversize outcome")
		require.Equal(t, claimed.Tasks[1].Lease.Epoch, run.Tasks[0].Epoch)
		ext, err := e.store.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: "w", Duration: time.Minute,
			Leases: []store.Lease{claimed.Tasks[1].Lease}})
		require.NoError(t, err)
		require.NoError(t, ext[0].Err, "its lease still holds")
		res, err = e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
			{Lease: claimed.Tasks[1].Lease, Outcome: store.OutcomeFailed, Error: "result too large"}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	for _, id := range ids {
		run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: id})
		require.NoError(t, err)
		require.True(t, run.Status.Terminal(), "run %s", id)
		require.Zero(t, run.Tasks[0].Crashes)
	}
}
