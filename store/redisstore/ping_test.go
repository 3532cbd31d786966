package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

var _ store.Pinger = (*redisstore.Store)(nil)

func TestStorePing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	m.SetTime(start.Add(time.Hour))
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })

	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	res, err := s.StorePing(ctx, &store.StorePingParams{})
	require.NoError(t, err)
	require.Equal(t, start.Add(time.Hour), res.Now, "the server's clock")

	clk := fakeclock.New(start)
	s, err = redisstore.New(ctx, c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	res, err = s.StorePing(ctx, &store.StorePingParams{})
	require.NoError(t, err)
	require.Equal(t, start, res.Now, "the injected clock, as the scripts see it")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.StorePing(cancelled, &store.StorePingParams{})
	require.ErrorIs(t, err, context.Canceled)

	m.Close()
	_, err = s.StorePing(ctx, &store.StorePingParams{})
	require.Error(t, err, "a server that does not answer is reported, clock or not")
}

func TestStorePingServer(t *testing.T) {
	t.Parallel()
	requireServer(t)
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(context.Background(), c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	before := time.Now()
	res, err := s.StorePing(context.Background(), &store.StorePingParams{})
	require.NoError(t, err)
	require.WithinDuration(t, before, res.Now, time.Minute, "redis-server runs on this host's clock")
	require.Equal(t, time.UTC, res.Now.Location())
}
