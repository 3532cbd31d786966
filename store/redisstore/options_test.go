package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

func miniClient(t *testing.T) *redis.Client {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestOptionsRejected gives every option each value it refuses: New
// returns no store and one *store.OptionError naming the option and the
// value.
func TestOptionsRejected(t *testing.T) {
	t.Parallel()
	c := miniClient(t)
	hostile := strings.Repeat("x{", 100) + "\n"
	for _, tc := range []struct {
		opt     Option
		message string
	}{
		{WithPrefix(""), `redisstore.WithPrefix(""): is empty`},
		{WithPrefix("a{b}"), `redisstore.WithPrefix("a{b}"): has a character outside`},
		{WithPrefix("a:b"), `redisstore.WithPrefix("a:b"): has a character outside`},
		{WithPrefix(strings.Repeat("p", 129)), `redisstore.WithPrefix("` + strings.Repeat("p", 32) + `"…(129 bytes)): is longer than 128 bytes`},
		{WithPrefix(hostile), `redisstore.WithPrefix("` + strings.Repeat("x{", 16) + `"…(201 bytes)): is longer than 128 bytes`},
		{WithShards(0), "redisstore.WithShards(0): want 1..16384"},
		{WithShards(-1), "redisstore.WithShards(-1): want 1..16384"},
		{WithFormatVersion(FormatVersionPrevious - 1), "redisstore.WithFormatVersion(6): want 7 or 8"},
		{WithFormatVersion(FormatVersionNewest + 1), "redisstore.WithFormatVersion(9): want 7 or 8"},
		{WithShards(MaxShards + 1), "redisstore.WithShards(16385): want 1..16384"},
		{WithRetention(0), "redisstore.WithRetention(0s): want at least 1ms"},
		{WithRetention(-time.Second), "redisstore.WithRetention(-1s): want at least 1ms"},
		{WithRetention(time.Microsecond), "redisstore.WithRetention(1µs): want at least 1ms"},
		{WithCompression(-1), "redisstore.WithCompression(-1): must not be negative"},
		{WithMaxResultBytes(0), "redisstore.WithMaxResultBytes(0): want 1..536870911"},
		{WithMaxResultBytes(-1), "redisstore.WithMaxResultBytes(-1): want 1..536870911"},
		{WithMaxResultBytes(store.MaxResultBytesMax + 1), "redisstore.WithMaxResultBytes(536870912): want 1..536870911"},
		{WithTaskLogLimit(0, 10), "redisstore.WithTaskLogLimit(0, 10): want 1..100000 lines and 1..16777216 bytes"},
		{WithTaskLogLimit(10, store.TaskLogBytesMax+1), "redisstore.WithTaskLogLimit(10, 16777217): want 1..100000 lines and 1..16777216 bytes"},
	} {
		s, err := New(context.Background(), c, tc.opt, WithLogger(discardLogger()))
		require.Nil(t, s, tc.message)
		require.ErrorIs(t, err, store.ErrInvalidOption, tc.message)
		var oe *store.OptionError
		require.True(t, errors.As(err, &oe), tc.message)
		require.Contains(t, err.Error(), tc.message)
		require.Less(t, len(err.Error()), 250, "a hostile value is not quoted whole")
	}

	_, err := New(context.Background(), c, WithShards(0), WithCompression(-1), WithPrefix(""))
	require.ErrorIs(t, err, store.ErrInvalidOption)
	for _, name := range []string{"WithShards", "WithCompression", "WithPrefix"} {
		require.Contains(t, err.Error(), "redisstore."+name, "every rejected option is reported")
	}

	_, err = New(context.Background(), nil)
	require.ErrorIs(t, err, store.ErrInvalidOption)

	s, err := New(context.Background(), c, WithLogger(discardLogger()), nil)
	require.Nil(t, s)
	require.ErrorIs(t, err, store.ErrInvalidOption, "a nil option is refused, not called")
}

// TestOptionsAccepted checks the defaults of options not given, the bounds
// given exactly, and the options whose zero value has a meaning.
func TestOptionsAccepted(t *testing.T) {
	t.Parallel()
	c := miniClient(t)
	ctx := context.Background()
	s, err := New(ctx, c, WithLogger(discardLogger()))
	require.NoError(t, err)
	require.Equal(t, PrefixDefault, s.cfg.prefix)
	require.Equal(t, ShardsDefault, s.cfg.shards)
	require.Equal(t, store.RetentionDefault, s.cfg.retention)
	require.Zero(t, s.cfg.compress, "compression is off by default")
	require.Nil(t, s.cfg.clock, "Redis TIME by default")
	require.Equal(t, store.MaxResultBytesDefault, s.cfg.maxResult)

	clk := fakeclock.New(goldenStart)
	s, err = New(ctx, c, WithPrefix(strings.Repeat("p", 128)), WithShards(MaxShards), WithRetention(store.RetentionMin),
		WithCompression(0), WithClock(clk), WithLogger(nil), WithStrictEviction())
	if err != nil {
		// miniredis hides its eviction policy; every option passed.
		require.ErrorIs(t, err, ErrEvictionPolicy)
		require.NotErrorIs(t, err, store.ErrInvalidOption)
	}
	s, err = New(ctx, c, WithPrefix("a.b_c-1"), WithShards(1), WithRetention(1500*time.Microsecond), WithCompression(1),
		WithMaxResultBytes(1), WithLogger(discardLogger()))
	require.NoError(t, err)
	require.Equal(t, 1, s.cfg.maxResult)
	require.Equal(t, "a.b_c-1", s.cfg.prefix)
	require.Equal(t, int64(1), s.retentionMs(), "retention is kept in ms, rounded down")
	require.Equal(t, 1, s.cfg.compress)
	s, err = New(ctx, c, WithMaxResultBytes(store.MaxResultBytesMax), WithLogger(discardLogger()))
	require.NoError(t, err)
	require.Equal(t, store.MaxResultBytesMax, s.cfg.maxResult)

	var cfg config
	for _, o := range []Option{WithClock(clk), WithClock(nil), WithLogger(nil)} {
		o(&cfg)
	}
	require.NoError(t, cfg.err())
	cfg.withDefaults()
	require.Same(t, slog.Default(), cfg.logger, "nil means the default logger")
	require.Nil(t, cfg.clock, "nil keeps Redis TIME")
}
