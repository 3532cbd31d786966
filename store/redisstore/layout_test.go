package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestLayoutIsRecordedAndEnforced: the first store of a prefix records its
// shard count; a store configured with another refuses to start with a
// typed error, and one configured alike, or on another prefix, starts.
func TestLayoutIsRecordedAndEnforced(t *testing.T) {
	t.Parallel()
	for name, client := range map[string]func(t *testing.T) redis.UniversalClient{
		"miniredis": func(t *testing.T) redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		},
		"redis-server": func(t *testing.T) redis.UniversalClient {
			if server.addr == "" {
				redistest.Skip(t, errString(server.missing))
			}
			return redis.NewClient(&redis.Options{Addr: server.addr})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := client(t)
			t.Cleanup(func() { _ = c.Close() })
			prefix := "layout" + strconv.FormatInt(prefixes.Add(1), 10)
			open := func(p string, shards int) error {
				_, err := redisstore.New(ctx, c, redisstore.WithPrefix(p), redisstore.WithShards(shards), redisstore.WithLogger(quietLogger()))
				return err
			}
			require.NoError(t, open(prefix, 4), "the first store records its layout")
			require.NoError(t, open(prefix, 4), "a store laid out alike starts")
			err := open(prefix, 16)
			require.ErrorIs(t, err, redisstore.ErrLayoutMismatch, "a store with another shard count must refuse to start")
			var le *redisstore.LayoutError
			require.True(t, errors.As(err, &le))
			require.Equal(t, "layout 1 shards 4", le.Recorded)
			require.Equal(t, "layout 1 shards 16", le.Configured)
			require.Contains(t, err.Error(), "WithShards")
			require.NoError(t, open(prefix+"-other", 16), "another prefix has its own layout")
		})
	}
}
