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

// TestLostTaskLogAppendReply loses the reply of a task log append on a real
// redis-server, once resent by the client and once by the caller: either
// way the lines are stored once, the totals count them once, and the
// answer is the first call's.
func TestLostTaskLogAppendReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil, redisstore.WithTaskLogLimit(3, 1<<10))
	ids := e.createOneTaskRuns(t, 1)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	ct := claimed.Tasks[0]
	now := time.Now()
	send := func(s *redisstore.Store, seq int, texts ...string) (*store.TaskLogAppendResult, error) {
		p := &store.TaskLogAppendParams{Lease: ct.Lease, Attempt: ct.Attempt, Seq: seq}
		for _, x := range texts {
			p.Lines = append(p.Lines, store.LogLine{Time: now, Level: 0, Text: x})
		}
		return s.TaskLogAppend(ctx, p)
	}

	// go-redis resends the append whose reply was lost.
	e.proxy.DropReplyTo("lost-by-client")
	res, err := send(e.store, 1, "lost-by-client", "two")
	require.NoError(t, err)
	require.Equal(t, 1, e.proxy.Dropped(), "the append's reply was lost once")
	require.Equal(t, store.TaskLogAppendResult{Stored: 2}, *res, "the resend answers what the first call stored")

	// A client that does not resend: the caller sends it again itself.
	c2 := redis.NewClient(&redis.Options{Addr: e.proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c2.Close() })
	s2, err := redisstore.New(ctx, c2, redisstore.WithClock(e.clk), redisstore.WithLogger(quietLogger()), redisstore.WithTaskLogLimit(3, 1<<10))
	require.NoError(t, err)
	e.proxy.DropReplyTo("lost-by-caller")
	_, err = send(s2, 2, "lost-by-caller", "over the cap")
	require.Error(t, err, "the reply was lost")
	require.Equal(t, 2, e.proxy.Dropped())
	res, err = send(s2, 2, "lost-by-caller", "over the cap")
	require.NoError(t, err)
	require.Equal(t, store.TaskLogAppendResult{Stored: 1, Dropped: 1}, *res, "the caller's resend answers the first call's result")

	got, err := e.store.TaskLogRead(ctx, &store.TaskLogReadParams{RunID: ids[0], Task: "t"})
	require.NoError(t, err)
	var texts []string
	for _, l := range got.Lines {
		texts = append(texts, l.Text)
	}
	require.Equal(t, []string{"lost-by-client", "two", "lost-by-caller"}, texts, "no line stored twice")
	require.Equal(t, 1, got.Dropped, "the dropped line counted once")
}
