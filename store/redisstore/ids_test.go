package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/ids"
)

// later reports whether b comes after a in the contract's order of run ids:
// longer, or as long and bytewise greater.
func later(a, b string) bool { return len(b) > len(a) || (len(b) == len(a) && b > a) }

func TestIDBlockIncreasesAndLandsOnShards(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	for _, shards := range []int{1, 3, 64, 100} {
		var b idBlock
		seq := "seq" + string(rune('a'+shards%26))
		prev := ""
		for i := 0; i < 500; i++ {
			want := -1
			if i%3 == 0 {
				want = i % shards
			}
			id, shard, err := b.take(ctx, c, seq, shards, want)
			require.NoError(t, err)
			require.NoError(t, ids.Check(id))
			require.True(t, prev == "" || later(prev, id), "shards %d: ids from one block holder increase: %q then %q", shards, prev, id)
			got, ok := shardOf(id, shards)
			require.True(t, ok, id)
			require.Equal(t, shard, got)
			if want >= 0 {
				require.Equal(t, want, shard, "shards %d: a keyed id lands on its shard", shards)
			}
			prev = id
		}
		reserved, err := c.Get(ctx, seq).Int64()
		require.NoError(t, err)
		n, _ := strconv.ParseInt(prev[:strings.IndexByte(prev, '-')], 10, 64)
		require.GreaterOrEqual(t, reserved, n)
	}
}

func TestIDBlockReservesOncePerBlock(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	var a, b idBlock
	seen := map[string]bool{}
	for i := 0; i < 3*idBlockSize; i++ {
		for _, blk := range []*idBlock{&a, &b} {
			id, _, err := blk.take(ctx, c, "seq", 1, -1)
			require.NoError(t, err)
			require.False(t, seen[id], "two holders never hand out the same id")
			seen[id] = true
		}
	}
	reserved, err := c.Get(ctx, "seq").Int64()
	require.NoError(t, err)
	require.Equal(t, int64(2*3*idBlockSize), reserved, "one INCRBY per block of ids: none wasted while both keep submitting")
}

// TestIDBlockAfterDataLoss empties the server under a block holder and a
// new one: no id comes out twice, and the old holder's ids keep increasing.
func TestIDBlockAfterDataLoss(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	var old, fresh idBlock
	seen := map[string]bool{}
	prevOld := ""
	takeOld := func() {
		id, _, err := old.take(ctx, c, "seq", 1, -1)
		require.NoError(t, err)
		require.False(t, seen[id], "id %s handed out twice", id)
		require.True(t, prevOld == "" || later(prevOld, id), "%q then %q", prevOld, id)
		seen[id], prevOld = true, id
	}
	for i := 0; i < 100; i++ {
		takeOld()
	}
	m.FlushAll()
	for i := 0; i < 3*idBlockSize; i++ {
		id, _, err := fresh.take(ctx, c, "seq", 1, -1)
		require.NoError(t, err)
		require.False(t, seen[id], "id %s handed out twice", id)
		seen[id] = true
		takeOld()
	}
}

func TestShardOfBothFormats(t *testing.T) {
	for id, want := range map[string]int{"7": 1, "12": 0, "7-abcdefgh12": 1, "12-0000000000": 0, "100-zzzzzzzzzz": 1} {
		got, ok := shardOf(id, 3)
		require.True(t, ok, id)
		require.Equal(t, want, got, id)
	}
	for _, id := range []string{"", "0", "07", "-1", "7-", "7-abc", "7-ABCDEFGH12", "7-abcdefgh123", "x-abcdefgh12", "7-abcdefgh1_", "7-abcdefgh12-"} {
		_, ok := shardOf(id, 3)
		require.False(t, ok, id)
	}
}
