package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/redisstore"
)

// sharedOption is one option every store takes, given one value, built
// for each store.
type sharedOption struct {
	call  string // the call as written, without the package
	mem   memstore.Option
	redis redisstore.Option
	ok    bool // both stores take it
}

// sharedOptions is the table of the options both stores take: the same
// values are accepted and refused alike, each bound on both sides of it.
func sharedOptions() []sharedOption {
	var cases []sharedOption
	add := func(ok bool, call string, mem memstore.Option, red redisstore.Option) {
		cases = append(cases, sharedOption{call: call, mem: mem, redis: red, ok: ok})
	}
	dur := func(name string, ok bool, d time.Duration, mem func(time.Duration) memstore.Option, red func(time.Duration) redisstore.Option) {
		add(ok, fmt.Sprintf("%s(%v)", name, d), mem(d), red(d))
	}
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, false}, {-time.Second, false}, {time.Microsecond, false}, {store.RetentionMin, true}, {time.Hour, true}} {
		dur("WithRetention", c.ok, c.d, memstore.WithRetention, redisstore.WithRetention)
	}
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{-time.Nanosecond, false}, {0, true}, {3 * time.Hour, true}} {
		dur("WithHistoryRetention", c.ok, c.d, memstore.WithHistoryRetention, redisstore.WithHistoryRetention)
	}
	for _, c := range []struct {
		service string
		status  store.RunStatus
		d       time.Duration
		ok      bool
	}{
		{"", "", store.RetentionMin, true},
		{"billing", store.RunFailed, time.Hour, true},
		{"billing", "", time.Hour, true},
		{"", store.RunCancelled, time.Minute, true},
		{"a:b", "", time.Hour, false},
		{strings.Repeat("s", 129), "", time.Hour, false},
		{"", store.RunRunning, time.Hour, false},
		{"", "bogus", time.Hour, false},
		{"", "", 0, false},
		{"billing", store.RunFailed, -time.Hour, false},
	} {
		add(c.ok, fmt.Sprintf("WithRetentionFor(%q, %q, %v)", c.service, c.status, c.d),
			memstore.WithRetentionFor(c.service, c.status, c.d), redisstore.WithRetentionFor(c.service, c.status, c.d))
	}
	count := func(name string, ok bool, n int, mem func(int) memstore.Option, red func(int) redisstore.Option) {
		add(ok, fmt.Sprintf("%s(%d)", name, n), mem(n), red(n))
	}
	for _, c := range []struct {
		n  int
		ok bool
	}{{-1, false}, {0, false}, {1, true}, {store.EventCapMax, true}, {store.EventCapMax + 1, false}} {
		count("WithEventCap", c.ok, c.n, memstore.WithEventCap, redisstore.WithEventCap)
	}
	for _, c := range []struct {
		n  int
		ok bool
	}{{-1, false}, {0, true}, {1, true}, {store.StatsWindowMax, true}, {store.StatsWindowMax + 1, false}} {
		count("WithStats", c.ok, c.n, memstore.WithStats, redisstore.WithStats)
	}
	for _, c := range []struct {
		n  int
		ok bool
	}{{-1, false}, {0, false}, {1, true}, {store.MaxResultBytesMax, true}, {store.MaxResultBytesMax + 1, false}} {
		count("WithMaxResultBytes", c.ok, c.n, memstore.WithMaxResultBytes, redisstore.WithMaxResultBytes)
	}
	for _, c := range []struct {
		lines, bytes int
		ok           bool
	}{
		{1, 1, true}, {store.TaskLogLinesMax, store.TaskLogBytesMax, true},
		{0, 1, false}, {1, 0, false}, {-1, -1, false},
		{store.TaskLogLinesMax + 1, 1, false}, {1, store.TaskLogBytesMax + 1, false},
	} {
		add(c.ok, fmt.Sprintf("WithTaskLogLimit(%d, %d)", c.lines, c.bytes),
			memstore.WithTaskLogLimit(c.lines, c.bytes), redisstore.WithTaskLogLimit(c.lines, c.bytes))
	}
	add(true, "WithClock(nil)", memstore.WithClock(nil), redisstore.WithClock(nil))
	return cases
}

// TestSharedOptionsMeanTheSame gives memstore.New and redisstore.New each
// value of the options they share: both take it or both refuse it, and a
// refusal is an *store.OptionError named after the store's option, with
// the same value and reason on both, matching store.ErrInvalidOption.
func TestSharedOptionsMeanTheSame(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { c.Close() })
	for i, tc := range sharedOptions() {
		ms, memErr := memstore.New(tc.mem)
		// A prefix per case: stats are a setting of the prefix (layout.go).
		rs, redisErr := redisstore.New(ctx, c, tc.redis, redisstore.WithLogger(quietLogger()), redisstore.WithPrefix(fmt.Sprint("shared", i)))
		if tc.ok {
			require.NoError(t, memErr, tc.call)
			require.NoError(t, redisErr, tc.call)
			require.NotNil(t, ms, tc.call)
			require.NotNil(t, rs, tc.call)
			continue
		}
		require.Error(t, memErr, "memstore.%s is refused as on Redis", tc.call)
		require.Error(t, redisErr, "redisstore.%s is refused as on memstore", tc.call)
		require.True(t, ms == nil && rs == nil, "%s: no store", tc.call)
		name := tc.call[:strings.IndexByte(tc.call, '(')]
		var mo, ro *store.OptionError
		for _, side := range []struct {
			err    error
			oe     **store.OptionError
			prefix string
		}{{memErr, &mo, "memstore."}, {redisErr, &ro, "redisstore."}} {
			require.ErrorIs(t, side.err, store.ErrInvalidOption, "%s%s", side.prefix, tc.call)
			require.True(t, errors.As(side.err, side.oe), "%s%s: %v", side.prefix, tc.call, side.err)
			require.Equal(t, side.prefix+name, (*side.oe).Option, tc.call)
		}
		require.Equal(t, mo.Reason, ro.Reason, "%s is refused for the same reason", tc.call)
		require.Equal(t, mo.Value, ro.Value, "%s shows the same value", tc.call)
	}

	_, memErr := memstore.New(nil)
	_, redisErr := redisstore.New(ctx, c, nil)
	require.ErrorIs(t, memErr, store.ErrInvalidOption, "a nil option")
	require.ErrorIs(t, redisErr, store.ErrInvalidOption, "a nil option")

	_, memErr = memstore.New(memstore.WithEventCap(0), memstore.WithStats(-1))
	_, redisErr = redisstore.New(ctx, c, redisstore.WithEventCap(0), redisstore.WithStats(-1))
	for _, name := range []string{"WithEventCap", "WithStats"} {
		require.Contains(t, memErr.Error(), "memstore."+name, "every refused option is reported")
		require.Contains(t, redisErr.Error(), "redisstore."+name, "every refused option is reported")
	}
}

// sharedPair builds a memstore and a redisstore on miniredis with the same
// shared options, both on one fake clock; advance moves the clock and
// miniredis's TTLs together.
func sharedPair(t *testing.T, opts ...sharedOption) (stores map[string]store.Store, advance func(time.Duration)) {
	t.Helper()
	m := miniredis.RunT(t)
	m.SetTime(start)
	clk := fakeclock.New(start)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	memOpts := []memstore.Option{memstore.WithClock(clk)}
	redisOpts := []redisstore.Option{redisstore.WithClock(clk), redisstore.WithLogger(quietLogger())}
	for _, o := range opts {
		memOpts, redisOpts = append(memOpts, o.mem), append(redisOpts, o.redis)
	}
	ms, err := memstore.New(memOpts...)
	require.NoError(t, err)
	rs, err := redisstore.New(context.Background(), c, redisOpts...)
	require.NoError(t, err)
	return map[string]store.Store{"memstore": ms, "redisstore": rs}, func(d time.Duration) {
		clk.Advance(d)
		m.FastForward(d)
	}
}

// The defaults mean the same on both stores: stats are off (StoreStats
// answers an *store.UnsupportedError for StatsStore) until WithStats is
// given, and a finished run is kept for store.RetentionDefault.
func TestSharedOptionDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stores, advance := sharedPair(t)
	for name, st := range stores {
		_, err := st.(store.StatsStore).StoreStats(ctx, &store.StoreStatsParams{})
		require.ErrorIs(t, err, store.ErrUnsupported, "%s: stats are off by default", name)
		var unsupported *store.UnsupportedError
		require.ErrorAs(t, err, &unsupported, name)
		require.Equal(t, "StatsStore", unsupported.Capability, name)
	}

	wf := &store.WorkflowSpec{Name: "wf", Strategy: store.StrategyContinue, Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	ids := map[string]string{}
	for name, st := range stores {
		res, err := st.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err, name)
		_, err = st.RunCancel(ctx, &store.RunCancelParams{ID: res.Run.ID})
		require.NoError(t, err, name)
		ids[name] = res.Run.ID
	}
	advance(store.RetentionDefault - time.Second)
	for name, st := range stores {
		_, err := st.RunGet(ctx, &store.RunGetParams{ID: ids[name]})
		require.NoError(t, err, "%s: a finished run is kept for RetentionDefault", name)
	}
	advance(2 * time.Second)
	for name, st := range stores {
		_, err := st.RunGet(ctx, &store.RunGetParams{ID: ids[name]})
		require.ErrorIs(t, err, store.ErrNotFound, "%s: and freed after it", name)
	}

	stores, _ = sharedPair(t, sharedOption{mem: memstore.WithStats(0), redis: redisstore.WithStats(0)})
	for name, st := range stores {
		res, err := st.(store.StatsStore).StoreStats(ctx, &store.StoreStatsParams{})
		require.NoError(t, err, "%s: WithStats(0) turns stats on with the default window", name)
		require.NotNil(t, res, name)
	}
}
