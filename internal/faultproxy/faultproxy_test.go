package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/internal/faultproxy"
	"github.com/plaitdag/plait/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup starts a redis-server and a proxy in front of it, and returns a
// client through the proxy (with the given retries) and one straight to
// the server.
func setup(t *testing.T, retries int) (*faultproxy.Proxy, *redis.Client, *redis.Client) {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	p, err := faultproxy.Start(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	via := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: retries, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = via.Close() })
	direct := srv.Client()
	t.Cleanup(func() { _ = direct.Close() })
	return p, via, direct
}

var ctx = context.Background()

func TestDroppedReplyRanOnTheServer(t *testing.T) {
	t.Parallel()
	p, via, direct := setup(t, -1)
	require.NoError(t, via.Set(ctx, "k", "v", 0).Err())
	p.DropReplyTo("INCR")
	require.Error(t, via.Incr(ctx, "n").Err(), "the client never sees the reply")
	require.Equal(t, "1", direct.Get(ctx, "n").Val(), "but the server ran the command")
	require.Equal(t, 1, p.Dropped())
	require.Equal(t, int64(2), via.Incr(ctx, "n").Val(), "the next command goes through")
}

// A client that retries on network errors applies a command twice when its
// reply is lost: the fault the stores must survive.
func TestDroppedReplyIsRetriedByTheClient(t *testing.T) {
	t.Parallel()
	p, via, direct := setup(t, 3)
	p.DropReplyTo("INCR")
	require.Equal(t, int64(2), via.Incr(ctx, "n").Val())
	require.Equal(t, "2", direct.Get(ctx, "n").Val())
}

func TestStallAndResume(t *testing.T) {
	t.Parallel()
	p, via, _ := setup(t, -1)
	require.NoError(t, via.Ping(ctx).Err())
	p.Stall()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	require.Error(t, via.Ping(short).Err(), "a stalled network answers nothing")
	p.Resume()
	require.NoError(t, via.Ping(ctx).Err())
}

func TestCut(t *testing.T) {
	t.Parallel()
	p, via, _ := setup(t, -1)
	require.NoError(t, via.Ping(ctx).Err())
	require.Equal(t, 1, p.Conns())
	p.Cut()
	require.Zero(t, p.Conns(), "every connection is closed")
	// The client learns of the cut from its pooled connection: its next
	// command may be written before the close reaches the client's socket
	// and fail with a network error, which drops that connection from the
	// pool. The cut is what the proxy owes; the command after it dials a
	// new connection, which the proxy must accept.
	if err := via.Ping(ctx).Err(); err != nil {
		require.True(t, isNetworkError(err), "the first command after a cut fails only on the closed connection: %v", err)
		require.NoError(t, via.Ping(ctx).Err(), "the client dials again")
	}
	require.Equal(t, 1, p.Conns())
}

// isNetworkError reports whether err is what a client sees on a
// connection closed under it.
func isNetworkError(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}

// A delayed proxy holds back each request and each reply a duration drawn
// from the range: a round trip takes at least twice the least delay, at
// most twice the greatest (and the machine's own time), and the replies of
// one connection keep their order. Turned off, the latency goes away.
// Holding back one direction only, or not at all, fails the lower bound.
func TestDelay(t *testing.T) {
	t.Parallel()
	p, via, _ := setup(t, -1)
	require.NoError(t, via.Ping(ctx).Err())
	const least, most = 30 * time.Millisecond, 60 * time.Millisecond
	p.Delay(least, most, 1)
	for i := int64(1); i <= 5; i++ {
		begin := time.Now()
		n, err := via.Incr(ctx, "n").Result()
		took := time.Since(begin)
		require.NoError(t, err)
		require.Equal(t, i, n, "replies keep their order")
		require.GreaterOrEqual(t, took, 2*least, "a request and its reply are each held back")
		require.Less(t, took, 2*most+500*time.Millisecond, "neither is held back longer than the range allows")
	}
	p.Delay(0, 0, 0)
	begin := time.Now()
	require.NoError(t, via.Ping(ctx).Err())
	require.Less(t, time.Since(begin), 2*least, "the latency is gone once turned off")
}
