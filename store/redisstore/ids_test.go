package redisstore

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestIDBlockIncreasesAndLandsOnShards(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	for _, shards := range []int{1, 3, 64, 100} {
		var b idBlock
		seq := "seq" + string(rune('a'+shards%26))
		prev := int64(0)
		for i := 0; i < 500; i++ {
			want := -1
			if i%3 == 0 {
				want = i % shards
			}
			id, err := b.take(ctx, c, seq, shards, want)
			require.NoError(t, err)
			require.Greater(t, id, prev, "shards %d: ids from one block holder increase", shards)
			if want >= 0 {
				require.Equal(t, int64(want), id%int64(shards), "shards %d: a keyed id lands on its shard", shards)
			}
			prev = id
		}
		reserved, err := c.Get(ctx, seq).Int64()
		require.NoError(t, err)
		require.GreaterOrEqual(t, reserved, prev)
	}
}

func TestIDBlockReservesOncePerBlock(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	var a, b idBlock
	seen := map[int64]bool{}
	for i := 0; i < 3*idBlockSize; i++ {
		for _, blk := range []*idBlock{&a, &b} {
			id, err := blk.take(ctx, c, "seq", 1, -1)
			require.NoError(t, err)
			require.False(t, seen[id], "two holders never hand out the same id")
			seen[id] = true
		}
	}
	reserved, err := c.Get(ctx, "seq").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(2*3*idBlockSize), reserved, "one INCRBY per block of ids: none wasted while both keep submitting")
}
