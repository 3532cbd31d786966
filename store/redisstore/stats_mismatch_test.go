package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// requireStatsMismatch checks err is the typed refusal of two settings.
func requireStatsMismatch(t *testing.T, err error, prefix string, recorded, configured int, words ...string) {
	t.Helper()
	require.ErrorIs(t, err, redisstore.ErrStatsMismatch)
	require.ErrorIs(t, err, redisstore.ErrLayoutMismatch, "stats are part of the layout")
	var se *redisstore.StatsMismatchError
	require.ErrorAs(t, err, &se)
	require.Equal(t, redisstore.StatsMismatchError{Prefix: prefix, Recorded: recorded, Configured: configured}, *se)
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

// TestStatsMismatchIsRefused: WithStats with another setting than the one
// recorded, stats off or another window, refuses to start.
func TestStatsMismatchIsRefused(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		_, err := openOn(c, prefix, redisstore.WithStats(0))
		require.NoError(t, err)
		_, err = openOn(c, prefix, redisstore.WithStats(store.StatsWindowDefault))
		require.NoError(t, err, "WithStats(0) recorded the default window")
		s, err := openOn(c, prefix, redisstore.WithStats(5))
		require.Nil(t, s)
		requireStatsMismatch(t, err, prefix, store.StatsWindowDefault, 5, `prefix "`+prefix+`"`, "WithStats(1000)", "WithStats(5)", "without WithStats")

		off := prefix + "-off"
		_, err = openOn(c, off)
		require.NoError(t, err)
		_, err = openOn(c, off, redisstore.WithStats(0))
		requireStatsMismatch(t, err, off, 0, store.StatsWindowDefault, "stats off", "WithStats(1000)")
	})
}

// TestStatsAddedToAnOldLayoutRecord: a layout record from before stats
// were part of it reads as stats off, is left alone by stores without
// WithStats, and takes the setting of the first store given WithStats,
// which binds the stores after it.
func TestStatsAddedToAnOldLayoutRecord(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		ctx := context.Background()
		key := prefix + ":{layout}"
		require.NoError(t, c.Set(ctx, key, "layout 1 shards 1", 0).Err())
		s, err := openOn(c, prefix)
		require.NoError(t, err)
		_, err = s.StoreStats(ctx, &store.StoreStatsParams{})
		require.ErrorIs(t, err, store.ErrUnsupported, "an old record reads as stats off")
		require.Equal(t, "layout 1 shards 1", c.Get(ctx, key).Val(), "and stays as it was")

		_, err = openOn(c, prefix, redisstore.WithStats(7))
		require.NoError(t, err, "the first store given WithStats records it")
		require.Equal(t, "layout 1 shards 1 stats 7", c.Get(ctx, key).Val())
		s, err = openOn(c, prefix)
		require.NoError(t, err)
		_, err = s.StoreStats(ctx, &store.StoreStatsParams{})
		require.NoError(t, err, "a later store takes the recorded setting")
		_, err = openOn(c, prefix, redisstore.WithStats(8))
		requireStatsMismatch(t, err, prefix, 7, 8)

		_, err = openOn(c, prefix, redisstore.WithShards(2), redisstore.WithStats(7))
		require.ErrorIs(t, err, redisstore.ErrLayoutMismatch, "the shard count is still checked first")
		require.NotErrorIs(t, err, redisstore.ErrStatsMismatch)
	})
}
