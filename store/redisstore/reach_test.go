package redisstore_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store/redisstore"
)

// closedPort answers a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestNewFailsFastWhenRedisIsDown: New against a port nothing listens on
// fails once, within the first contact's bound, with an error naming the
// address and the cause, and logs no warning it could not have checked.
func TestNewFailsFastWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	for name, client := range map[string]func(addr string) redis.UniversalClient{
		"client": func(addr string) redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: addr}) },
		"cluster": func(addr string) redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := closedPort(t)
			c := client(addr)
			t.Cleanup(func() { _ = c.Close() })
			var logs syncBuffer
			began := time.Now()
			s, err := redisstore.New(context.Background(), c, redisstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			took := time.Since(began)
			require.Nil(t, s)
			require.ErrorIs(t, err, redisstore.ErrUnreachable)
			var ue *redisstore.UnreachableError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, []string{addr}, ue.Addrs)
			require.Contains(t, err.Error(), "cannot reach Redis at "+addr)
			require.Contains(t, err.Error(), "connection refused", "the cause, not only a deadline")
			require.Less(t, took, 2500*time.Millisecond, "one bounded first contact")
			require.Empty(t, strings.TrimSpace(logs.String()), "no warning about a policy it could not read")
		})
	}
}

// TestNewFailsWithinTheCallersDeadline: a deadline of the caller's shorter
// than the first contact's bound is kept.
func TestNewFailsWithinTheCallersDeadline(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: closedPort(t)})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.ErrorIs(t, err, redisstore.ErrUnreachable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(began), time.Second)
}
