package plait_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// acked is a run whose submit was acknowledged, and when.
type acked struct {
	id string
	at time.Time
}

// steadySubmitter submits a run at a steady rate until stopped,
// recording the acknowledged runs and counting refused submits by kind.
type steadySubmitter struct {
	s    *plait.Scheduler
	wf   *plait.Workflow
	errs *errKinds

	mu   sync.Mutex
	runs []acked
	// wake receives a token at each acknowledged submit.
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func startSubmitter(s *plait.Scheduler, wf *plait.Workflow, every time.Duration) *steadySubmitter {
	sub := &steadySubmitter{s: s, wf: wf, errs: newErrKinds(), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sub.done)
		tick := time.NewTicker(every) // the load's rate
		defer tick.Stop()
		for {
			select {
			case <-sub.stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			run, err := s.Submit(ctx, wf)
			cancel()
			if err != nil {
				sub.errs.add(err)
				continue
			}
			sub.mu.Lock()
			sub.runs = append(sub.runs, acked{run.ID, time.Now()})
			sub.mu.Unlock()
			select {
			case sub.wake <- struct{}{}:
			default:
			}
		}
	}()
	return sub
}

// count answers how many submits were acknowledged so far.
func (sub *steadySubmitter) count() int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return len(sub.runs)
}

// waitFor waits until n submits in all were acknowledged, or limit passes.
func (sub *steadySubmitter) waitFor(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for sub.count() < n {
		select {
		case <-sub.wake:
		case <-deadline:
			t.Fatalf("%d of %d submits acknowledged after %s; refused: %s", sub.count(), n, limit, sub.errs)
		}
	}
}

// waitRefused waits until a submit was refused with kind, or limit passes.
func (sub *steadySubmitter) waitRefused(t *testing.T, kind string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for sub.errs.get(kind) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no submit refused with %s after %s; refused: %s", kind, limit, sub.errs)
		}
		select {
		case <-sub.wake:
		case <-time.After(10 * time.Millisecond): // a refusal wakes no one: poll its count
		}
	}
}

func (sub *steadySubmitter) halt() []acked {
	close(sub.stop)
	<-sub.done
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.runs
}

// TestSentinelFailoverUnderLoad fails a primary over to a replica that lags
// (its replication link held for a few seconds while it keeps answering
// the sentinels) under a steady load of submits and two workers draining,
// once with min-replicas-to-write 0 and once with 1 (max lag 1 s), and
// measures the acknowledged runs the failover rolled back. It checks that
// the store comes back through go-redis's failover client without a
// restart of the schedulers (submits and runs go on after the failover),
// that every acknowledged run is either lost whole (the failover rolled its
// create back) or completes, and how far min-replicas-to-write bounds the
// loss: with 0 the runs acknowledged during the whole lag are lost, with 1
// only those acknowledged before the primary stopped taking writes, which
// it must do within max lag + 2 s of the lag starting (the lag counts in
// whole seconds from the replica's last acknowledgement, and the primary
// recounts its good replicas once a second). It fails if
// min-replicas-to-write is not applied (its CONFIG SET removed: no submit
// is refused, and runs acknowledged to the end of the lag and during the
// failover are lost), if the lag is not injected (the first case then
// loses nothing), or if the store does not follow the new master (no
// submit acknowledged after the failover).
func TestSentinelFailoverUnderLoad(t *testing.T) {
	figures := map[int]string{}
	for _, minReplicas := range []int{0, 1} {
		t.Run("min-replicas-to-write="+strconv.Itoa(minReplicas), func(t *testing.T) {
			figures[minReplicas] = sentinelFailover(t, minReplicas)
		})
	}
	if len(figures) == 2 {
		t.Logf("FIGURE sentinel: lag of %s then SENTINEL FAILOVER under load; min-replicas-to-write 0: %s; "+
			"min-replicas-to-write 1 (max lag 1 s): %s", sentinelLag, figures[0], figures[1])
	}
}

// sentinelLag is how long the replica's link is held before the failover.
const sentinelLag = 4 * time.Second

func sentinelFailover(t *testing.T, minReplicas int) string {
	sent, err := redistest.StartSentinel(3, true)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(sent.Close)
	ctx := context.Background()
	const maxLag = 1
	if minReplicas > 0 {
		// On both: the replica is the master after the failover.
		for _, srv := range []*redistest.Server{sent.Primary, sent.Replica} {
			c := srv.Client()
			require.NoError(t, c.ConfigSet(ctx, "min-replicas-to-write", strconv.Itoa(minReplicas)).Err())
			require.NoError(t, c.ConfigSet(ctx, "min-replicas-max-lag", strconv.Itoa(maxLag)).Err())
			c.Close()
		}
		// The primary takes writes once its replica has acknowledged
		// within the max lag (a fresh link may not have yet).
		c := sent.Primary.Client()
		require.Eventually(t, func() bool { return c.Set(ctx, "probe", "1", 0).Err() == nil }, 10*time.Second, 20*time.Millisecond,
			"the primary never took a write with its replica linked")
		require.NoError(t, c.Del(ctx, "probe").Err())
		c.Close()
	}
	storeErrs := newErrKinds()
	newStore := func() *redisstore.Store {
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: sent.Addrs})
		c.AddHook(storeErrs)
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(ctx, c, redisstore.WithPrefix("sen"), redisstore.WithLogger(quietSlog()))
		require.NoError(t, err)
		return s
	}
	// Handlers that take a while keep tasks in flight across the lag's
	// start: their outcomes, recorded during the lag, are rolled back.
	counter, logs := newAttemptCounter(), newLogTally()
	counter.work = 20 * time.Millisecond
	for i := 0; i < 2; i++ {
		w := newWorker(t, newStore(), "w"+strconv.Itoa(i), plait.WithConcurrency(8), plait.WithLogger(logs.logger()),
			plait.WithLeaseDuration(3*time.Second), plait.WithSweepInterval(250*time.Millisecond))
		require.NoError(t, w.s.Handle("step", counter.handler))
		w.start(t)
	}
	submitter, err := plait.New(newStore(), plait.WithRemoteHandlers())
	require.NoError(t, err)
	wf := plait.NewWorkflow("failover").Task("a", "step", nil).Task("b", "step", nil, plait.After("a"))
	sub := startSubmitter(submitter, wf, 5*time.Millisecond)
	defer func() {
		select {
		case <-sub.done:
		default:
			sub.halt()
		}
	}()

	sub.waitFor(t, 100, failAfter)
	sent.ReplicaLink.Stall()
	lagAt := time.Now()
	if minReplicas > 0 {
		sub.waitRefused(t, "NOREPLICAS", sentinelLag)
	}
	<-time.After(time.Until(lagAt.Add(sentinelLag))) // the lag's length is the fault injected
	before := sub.count()
	require.NoError(t, sent.Failover(ctx))
	failedOver := time.Now()
	sent.ReplicaLink.Resume()
	// The store follows the new master: submits are acknowledged again.
	sub.waitFor(t, sub.count()+100, 30*time.Second)
	runs := sub.halt()

	// Each acknowledged run is lost whole (not found) or completes.
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lost []acked
	var ids []string
	for _, r := range runs {
		run, err := submitter.RunWait(wctx, r.id)
		if errors.Is(err, plait.ErrNotFound) {
			lost = append(lost, r)
			continue
		}
		require.NoError(t, err, "run %s acknowledged %s after the lag began", r.id, r.at.Sub(lagAt))
		require.Equal(t, plait.RunCompleted, run.Status, "run %s", r.id)
		ids = append(ids, r.id)
	}
	never, twice, example := counter.check(ids, []string{"a", "b"})
	require.Zero(t, never, "every surviving run's tasks ran: %s", example)
	var window time.Duration
	for _, r := range lost {
		require.True(t, r.at.After(lagAt.Add(-100*time.Millisecond)),
			"run %s was acknowledged %s before the lag began, yet lost", r.id, lagAt.Sub(r.at))
		window = max(window, r.at.Sub(lagAt))
	}
	fig := strconv.Itoa(len(lost)) + " of " + strconv.Itoa(len(runs)) + " acknowledged runs lost (" +
		strconv.Itoa(before-countBefore(runs, lagAt)) + " acknowledged during the lag), the last lost one acknowledged " +
		window.Round(10*time.Millisecond).String() + " into the lag; tasks run twice " + strconv.Itoa(twice) +
		"; submits refused: " + sub.errs.String() + "; errors reaching the store: " + storeErrs.String() +
		"; failover took " + failedOver.Sub(lagAt.Add(sentinelLag)).Round(10*time.Millisecond).String()
	t.Log(fig)
	t.Logf("the schedulers logged: %s", logs)
	if minReplicas == 0 {
		require.NotEmpty(t, lost, "the lag must show: runs acknowledged during it are rolled back")
	} else {
		require.Less(t, window, time.Duration(maxLag)*time.Second+2*time.Second,
			"min-replicas-to-write must stop the primary taking writes within max lag + 2 s")
	}
	return fig
}

// countBefore answers how many runs were acknowledged before t.
func countBefore(runs []acked, t time.Time) int {
	n := 0
	for _, r := range runs {
		if r.at.Before(t) {
			n++
		}
	}
	return n
}
