package redisstore_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
)

var (
	_ store.Store         = (*redisstore.Store)(nil)
	_ store.ScheduleStore = (*redisstore.Store)(nil)
)

// start is the fake clock's first reading in every harness.
var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// server is the one redis-server TestMain started, or why there is none.
var server struct {
	addr    string
	missing string
}

// prefixes makes every harness on the shared server use its own keys.
var prefixes atomic.Int64

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(serverMain{m})
}

// serverMain runs the tests between starting and stopping the shared
// redis-server, so goleak checks after the server is gone.
type serverMain struct{ m *testing.M }

func (s serverMain) Run() int {
	stop := startRedisServer()
	defer stop()
	return s.m.Run()
}

// startRedisServer starts the shared redis-server and returns the function
// that stops it.
func startRedisServer() (stop func()) {
	addr, stop, err := runRedisServer()
	if err != nil {
		server.missing = err.Error()
		return stop
	}
	server.addr = addr
	return stop
}

// runRedisServer starts a private redis-server (see internal/redistest)
// with extra arguments and returns its address and the function that stops
// it.
func runRedisServer(extra ...string) (addr string, stop func(), err error) {
	srv, err := redistest.Start(extra...)
	if err != nil {
		return "", func() {}, err
	}
	return srv.Addr, func() { _ = srv.Close() }, nil
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// maxResultBytes is the result limit of the conformance stores: small, so
// the case about larger results sends little.
const maxResultBytes = 1 << 10

// newMiniredisHarness gives each case its own miniredis; Advance moves the
// fake clock and miniredis's TTLs together.
func newMiniredisHarness(t *testing.T) *storetest.Harness { return miniredisHarness(t) }

// miniredisHarness is newMiniredisHarness with more options.
func miniredisHarness(t *testing.T, opts ...redisstore.Option) *storetest.Harness {
	h, _ := miniredisHarnessAndOpen(t, opts...)
	return h
}

// miniredisHarnessAndOpen is miniredisHarness, and a function that opens
// another store on the same miniredis, prefix and clock, with the
// harness's options and its own after them.
func miniredisHarnessAndOpen(t *testing.T, opts ...redisstore.Option) (*storetest.Harness, func(...redisstore.Option) *redisstore.Store) {
	m := miniredis.RunT(t)
	m.SetTime(start)
	clk := fakeclock.New(start)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	open := func(more ...redisstore.Option) *redisstore.Store {
		s, err := redisstore.New(context.Background(), c, append([]redisstore.Option{redisstore.WithClock(clk),
			redisstore.WithLogger(quietLogger()), redisstore.WithMaxResultBytes(maxResultBytes), redisstore.WithStats(0),
			redisstore.WithTaskLogLimit(5, 64), redisstore.WithHistoryRetention(3 * store.RetentionDefault)}, more...)...)
		require.NoError(t, err)
		return s
	}
	s := open(opts...)
	return &storetest.Harness{
		Store: s,
		Now:   clk.Now,
		Advance: func(d time.Duration) {
			clk.Advance(d)
			m.FastForward(d)
		},
		Caps: storetest.Caps{ExpiresKeys: true, Retention: store.RetentionDefault, HistoryRetention: 3 * store.RetentionDefault, MaxResultBytes: maxResultBytes,
			TaskLogLines: 5, TaskLogBytes: 64},
		Leftovers: redisLeftovers(c, "plait"),
	}, open
}

// redisServerHarness requires the shared redis-server, or skips.
func requireServer(t *testing.T) {
	t.Helper()
	if server.addr != "" {
		return
	}
	if os.Getenv("PLAIT_REQUIRE_REDIS") == "1" {
		t.Fatalf("%s; PLAIT_REQUIRE_REDIS=1 forbids skipping", server.missing)
	}
	t.Skip("redis-server not found; set PLAIT_REQUIRE_REDIS=1 to fail instead (" + server.missing + ")")
}

// newServerHarness gives each case a unique prefix on the shared server,
// with the fake clock passed to the scripts as "now".
func newServerHarness(t *testing.T) *storetest.Harness {
	clk := fakeclock.New(start)
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	t.Cleanup(func() { c.Close() })
	prefix := "t" + strconv.FormatInt(prefixes.Add(1), 10)
	s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithPrefix(prefix),
		redisstore.WithMaxResultBytes(maxResultBytes), redisstore.WithStats(0), redisstore.WithTaskLogLimit(5, 64),
		redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	return &storetest.Harness{Store: s, Now: clk.Now, Advance: clk.Advance, Caps: storetest.Caps{Retention: store.RetentionDefault, MaxResultBytes: maxResultBytes, TaskLogLines: 5, TaskLogBytes: 64},
		Leftovers: redisLeftovers(c, prefix)}
}

// redisLeftovers is the Leftovers hook of a harness whose store writes
// under prefix: every key whose name holds the run's id, and every entry
// of another key (index, queue, lease zset, dead letters, expiry list,
// any structure docs/redis-schema.md lists) that names the run, found by
// SCAN and read whole, as only a test may. The shard's event stream e and
// the claim memories c:<request> are left out, as the hook's contract
// says.
func redisLeftovers(c *redis.Client, prefix string) func(runID string) []string {
	return func(runID string) []string {
		ctx := context.Background()
		names := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(runID) + `($|[^0-9a-z])`)
		var out []string
		iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			if names.MatchString(k) {
				out = append(out, "key "+k)
				continue
			}
			_, rest, _ := strings.Cut(k, "}:")
			if rest == "e" || strings.HasPrefix(rest, "c:") {
				continue
			}
			var vals []string
			switch c.Type(ctx, k).Val() {
			case "string":
				vals = []string{c.Get(ctx, k).Val()}
			case "list":
				vals = c.LRange(ctx, k, 0, -1).Val()
			case "set":
				vals = c.SMembers(ctx, k).Val()
			case "zset":
				vals = c.ZRange(ctx, k, 0, -1).Val()
			case "hash":
				for f, v := range c.HGetAll(ctx, k).Val() {
					vals = append(vals, f, v)
				}
			case "stream":
				for _, m := range c.XRange(ctx, k, "-", "+").Val() {
					for f, v := range m.Values {
						if sharedNameEntry(ctx, c, k, rest, fmt.Sprint(v), runID) {
							continue
						}
						vals = append(vals, f, fmt.Sprint(v))
					}
				}
			}
			for _, v := range vals {
				if names.MatchString(v) {
					out = append(out, k+": "+strconv.Quote(v))
				}
			}
		}
		if err := iter.Err(); err != nil {
			out = append(out, "scan: "+err.Error())
		}
		return out
	}
}

// sharedNameEntry reports whether v, an entry of stream k (rest being
// its name after the shard) naming runID, is an entry of a name stream
// that also names a run still stored: such an entry is kept as long as
// the longest kept run of the call that created them (lua/lib_names.lua),
// a bound of its own like the event stream's cap.
func sharedNameEntry(ctx context.Context, c *redis.Client, k, rest, v, runID string) bool {
	if len(rest) < 3 || rest[0] != 'x' || rest[2] != ':' {
		return false
	}
	base := k[:len(k)-len(rest)]
	for _, id := range strings.Fields(v) {
		if id != runID && c.Exists(ctx, base+"r:"+id).Val() == 1 {
			return true
		}
	}
	return false
}

func TestConformance(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, newMiniredisHarness)
	})
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		requireServer(t)
		storetest.Run(t, newServerHarness)
	})
}
