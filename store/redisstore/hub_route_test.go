package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// TestEachEndedReadsTheRunsAMessageNames: the events channel's message is
// "e" then " <run> <status letter>" per run ended; any other form names
// no run, so that its hub tells every watcher.
func TestEachEndedReadsTheRunsAMessageNames(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		runs  []string
		named bool
	}{
		{"e", nil, true},
		{"e 12-ab S", []string{"12-ab"}, true},
		{"e 12-ab S 7-x F 9 C", []string{"12-ab", "7-x", "9"}, true},
		{"1", nil, false}, // a plait before runs were named
		{"", nil, false},
		{"e12-ab S", nil, false},
		{"e 12-ab", nil, false},
		{"e 12-ab ", nil, false},
		{"e  S", nil, false},
	} {
		var runs []string
		named := eachEnded(tc.msg, func(run string) { runs = append(runs, run) })
		require.Equal(t, tc.named, named, "%q", tc.msg)
		if named {
			require.Equal(t, tc.runs, runs, "%q", tc.msg)
		}
	}
}

// waitSignal fails the test unless w is told within 10 s.
func waitSignal(t *testing.T, w *watcher, what string) {
	t.Helper()
	select {
	case <-w.signal:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not told", what)
	}
}

// requireQuiet fails the test if w holds a signal.
func requireQuiet(t *testing.T, w *watcher, what string) {
	t.Helper()
	select {
	case <-w.signal:
		t.Fatalf("%s was told", what)
	default:
	}
}

// TestHubTellsEachWaiterOfItsRun: on one subscription, a message naming
// runs tells their waiters and every event reader, and no waiter of
// another run; a message in the form of a plait before runs were named
// ("1") tells every watcher, since it may stand for any end. A message is
// routed whole under the hub's lock, so once one watcher has its signal
// every other watcher told of that message has its own.
func TestHubTellsEachWaiterOfItsRun(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	h := newHub(c)
	const ch = "route:ev"
	watch := func(run string) *watcher {
		w, err := h.watch(ctx, ch, run)
		require.NoError(t, err)
		t.Cleanup(w.stop)
		return w
	}
	a, b, reader := watch("1-a"), watch("2-b"), watch("")
	for _, w := range []*watcher{a, b, reader} {
		select {
		case <-w.ready:
		case <-time.After(10 * time.Second):
			t.Fatal("the subscription was never confirmed")
		}
	}
	h.mu.Lock()
	require.Len(t, h.chans, 1, "one subscription for every watcher")
	h.mu.Unlock()

	require.NoError(t, c.Publish(ctx, ch, "e 2-b S").Err())
	waitSignal(t, b, "the waiter of 2-b")
	waitSignal(t, reader, "the event reader")
	requireQuiet(t, a, "the waiter of 1-a")

	require.NoError(t, c.Publish(ctx, ch, "e").Err())
	waitSignal(t, reader, "the event reader")
	requireQuiet(t, a, "the waiter of 1-a")
	requireQuiet(t, b, "the waiter of 2-b")

	require.NoError(t, c.Publish(ctx, ch, "e 1-a F 2-b C").Err())
	waitSignal(t, a, "the waiter of 1-a")
	waitSignal(t, b, "the waiter of 2-b")
	waitSignal(t, reader, "the event reader")

	require.NoError(t, c.Publish(ctx, ch, "1").Err())
	waitSignal(t, a, "the waiter of 1-a")
	waitSignal(t, b, "the waiter of 2-b")
	waitSignal(t, reader, "the event reader")
}

// TestRunWaitOfAnEarlierPlaitIsNotWoken shows what a rolling upgrade does
// to a RunWait of a plait before runs' ends rode in the events channel's
// message (lua/lib_run.lua): it subscribed to the run's own channel
// w:<run>, and a run this plait ends, by a cancel or by its last task's
// finish, publishes nothing there, while this plait's RunWait returns. The
// old waiter's first message is the test's own, sent after both ends: no
// status letter came before it on its connection.
func TestRunWaitOfAnEarlierPlaitIsNotWoken(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := New(ctx, c)
	require.NoError(t, err)
	cancelled, finished := createOneTaskRun(t, s), createOneTaskRun(t, s)
	var old []string
	for _, id := range []string{cancelled, finished} {
		shard, err := s.runShard(id)
		require.NoError(t, err)
		old = append(old, s.keys.done(shard, id))
	}
	oldWait := c.Subscribe(ctx, old...)
	t.Cleanup(func() { _ = oldWait.Close() })
	for range old {
		_, err := oldWait.Receive(ctx) // the confirmations
		require.NoError(t, err)
	}

	ends := make(chan *store.Run, 2)
	for _, id := range []string{cancelled, finished} {
		go func() {
			run, err := s.RunWait(ctx, &store.RunWaitParams{ID: id})
			if err != nil {
				run = nil
			}
			ends <- run
		}()
	}
	// Both waits are subscribed before the ends, so that the ends' message
	// is what wakes them: the cancel's own message (its step flushed its
	// events before the run ended) and the finish's one message of its call.
	require.Eventually(t, func() bool {
		s.hub.mu.Lock()
		defer s.hub.mu.Unlock()
		hc := s.hub.chans[s.keys.eventsChannel()]
		return hc != nil && hc.confirmed && len(hc.runs) == 2
	}, 10*time.Second, time.Millisecond, "the waits never subscribed")
	_, err = s.RunCancel(ctx, &store.RunCancelParams{ID: cancelled})
	require.NoError(t, err)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	require.Equal(t, finished, claimed.Tasks[0].Lease.RunID)
	fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
		{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	require.NoError(t, fin[0].Err)
	got := map[string]store.RunStatus{}
	for range 2 {
		select {
		case run := <-ends:
			require.NotNil(t, run, "a RunWait of this plait failed")
			got[run.ID] = run.Status
		case <-time.After(10 * time.Second):
			t.Fatal("a RunWait of this plait did not return after its run ended")
		}
	}
	require.Equal(t, map[string]store.RunStatus{cancelled: store.RunCancelled, finished: store.RunCompleted}, got)

	require.NoError(t, c.Publish(ctx, old[0], "test").Err())
	msg, err := oldWait.ReceiveMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, old[0], msg.Channel)
	require.Equal(t, "test", msg.Payload, "the old waiter heard an end")
}

// TestHubTellsRunWaitersOfAReconnect: a cut of the shared connection tells
// the waiters of runs too, though no message names their runs: an end
// published while it was down is lost to the hub, and each waiter reads its
// run again.
func TestHubTellsRunWaitersOfAReconnect(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	h := newHub(c)
	const ch = "reconnect:ev"
	w, err := h.watch(ctx, ch, "1-a")
	require.NoError(t, err)
	t.Cleanup(w.stop)
	select {
	case <-w.ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription was never confirmed")
	}
	requireQuiet(t, w, "the waiter of 1-a")
	require.NoError(t, c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
	waitSignal(t, w, "the waiter of 1-a")
}
