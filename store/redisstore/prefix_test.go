package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestPrefixErrorGivesTheRule: a refused prefix is told which character,
// the rule and why.
func TestPrefixErrorGivesTheRule(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: options are checked first
	t.Cleanup(func() { _ = c.Close() })
	for prefix, want := range map[string]string{
		"orders:v2": `redisstore.WithPrefix("orders:v2"): has a character outside [A-Za-z0-9._-] (':' at byte 6); want 1-128 bytes of [A-Za-z0-9._-], because ':' separates the parts of every key and '{' '}' would change its hash slot`,
		"a{b}":      `("a{b}"): has a character outside [A-Za-z0-9._-] ('{' at byte 1); want 1-128`,
		"café":      `('é' at byte 3)`,
		"x\xff":     `(byte 0xff at byte 1)`,
		"":          `redisstore.WithPrefix(""): is empty; want 1-128 bytes of [A-Za-z0-9._-]`,
	} {
		_, err := redisstore.New(context.Background(), c, redisstore.WithPrefix(prefix))
		require.ErrorIs(t, err, store.ErrInvalidOption, prefix)
		require.Contains(t, err.Error(), want)
	}
}

// TestExistingPrefix: under WithExistingPrefix a prefix no store has used
// is refused, with the known ones, and nothing is recorded for it; a used
// prefix opens.
func TestExistingPrefix(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		ctx := context.Background()
		typo := prefix + "-typo"
		s, err := openOn(c, typo, redisstore.WithExistingPrefix())
		require.Nil(t, s)
		require.ErrorIs(t, err, redisstore.ErrPrefixUnknown)
		var pe *redisstore.PrefixUnknownError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, typo, pe.Prefix)
		require.Contains(t, err.Error(), `prefix "`+typo+`" has no layout record`)
		require.Zero(t, c.Exists(ctx, typo+":{layout}").Val(), "a refused prefix is not recorded")

		_, err = openOn(c, prefix)
		require.NoError(t, err, "without the option the first store records the prefix")
		_, err = openOn(c, prefix, redisstore.WithExistingPrefix())
		require.NoError(t, err, "a recorded prefix opens")

		_, err = openOn(c, typo, redisstore.WithExistingPrefix())
		require.ErrorAs(t, err, &pe)
		require.GreaterOrEqual(t, pe.Total, 1)
		if pe.Total <= len(pe.Known) { // a shared server may know more than are listed
			require.Contains(t, pe.Known, prefix, "the known prefixes are listed")
			require.Contains(t, err.Error(), `known prefixes: `)
			require.Contains(t, err.Error(), `"`+prefix+`"`)
		}
		require.NotContains(t, pe.Known, typo)
	})
}

// TestExistingPrefixOfAnOldRecord: a prefix recorded before the registry
// existed opens under WithExistingPrefix, and is listed from then on.
func TestExistingPrefixOfAnOldRecord(t *testing.T) {
	t.Parallel()
	onBothServers(t, func(t *testing.T, c redis.UniversalClient, prefix string) {
		ctx := context.Background()
		require.NoError(t, c.Set(ctx, prefix+":{layout}", "layout 1 shards 1", 0).Err())
		_, err := openOn(c, prefix, redisstore.WithExistingPrefix())
		require.NoError(t, err)
		require.True(t, c.SIsMember(ctx, "plait:{layout}:prefixes", prefix).Val())
	})
}
