package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// TestWaitEndsWhenItsConfirmationIsLost: a RunWait whose subscription
// confirmation never makes its watcher ready (the hub is made to expect a
// second one) still returns once its run ends: the end's message proves
// the subscription and the wait reads the run again.
func TestWaitEndsWhenItsConfirmationIsLost(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := New(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	id := createOneTaskRun(t, s)
	// One more confirmation owed than will come: the watcher never turns ready.
	s.hub.mu.Lock()
	s.hub.pending[s.keys.eventsChannel()]++
	s.hub.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		run, err := s.RunWait(ctx, &store.RunWaitParams{ID: id})
		if err == nil && run.Status != store.RunCancelled {
			err = errUnexpectedStatus(run.Status)
		}
		done <- err
	}()
	// Cancel only once the server holds the wait's subscription, so the
	// end's message reaches it.
	ch := s.keys.eventsChannel()
	require.Eventually(t, func() bool { return c.PubSubNumSub(ctx, ch).Val()[ch] == 1 },
		10*time.Second, time.Millisecond, "the wait never subscribed")
	if _, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not return after its run ended")
	}
}

type errUnexpectedStatus store.RunStatus

func (e errUnexpectedStatus) Error() string { return "unexpected status " + string(e) }
