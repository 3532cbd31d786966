package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// Under the server's clock a read from a time starts at that time's
// stream id: it answers every event from the first at or after it, and
// none from a time after them all.
func TestSinceOnTheServerClock(t *testing.T) {
	requireServer(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithPrefix("since"+time.Now().Format("150405.000000")), redisstore.WithShards(2),
		redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	for range 4 {
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
	}
	all, err := s.EventRead(ctx, &store.EventReadParams{Limit: 100})
	require.NoError(t, err)
	require.Len(t, all.Events, 8)
	for _, k := range []int{0, 3, 6, 7} {
		// A read of the whole store merges its shards' streams, each in
		// time order, but not into one time order: what a read from a time
		// answers is every event at or after it, whichever shard holds it.
		since := all.Events[k].At
		var want []store.StoreEvent
		for _, e := range all.Events {
			if !e.At.Before(since) {
				want = append(want, e)
			}
		}
		res, err := s.EventRead(ctx, &store.EventReadParams{Since: since, Limit: 100})
		require.NoError(t, err)
		require.ElementsMatch(t, uncursored(want), uncursored(res.Events), "from event %d", k)
		require.Equal(t, all.Cursor, res.Cursor)
	}
	late, err := s.EventRead(ctx, &store.EventReadParams{Since: time.Now().Add(time.Hour), Limit: 100})
	require.NoError(t, err)
	require.Empty(t, late.Events)
	require.Equal(t, all.Cursor, late.Cursor, "nothing at or after it: the end")
}

// uncursored returns the events without their cursors, which name every
// shard's position and so depend on where a read of the store started.
func uncursored(evs []store.StoreEvent) []store.StoreEvent {
	out := make([]store.StoreEvent, len(evs))
	for i, e := range evs {
		e.Cursor = ""
		out[i] = e
	}
	return out
}
