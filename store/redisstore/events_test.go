package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
)

// TestEventsSmallCaps runs the event suite on stores whose run streams keep
// 50 events, so the case about a reader behind the cap runs.
func TestEventsSmallCaps(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		storetest.RunCapability(t, "EventStore", func(t *testing.T) *storetest.Harness {
			m := miniredis.RunT(t)
			m.SetTime(start)
			clk := fakeclock.New(start)
			c := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()),
				redisstore.WithEventCap(50))
			require.NoError(t, err)
			return &storetest.Harness{Store: s, Now: clk.Now, Advance: func(d time.Duration) { clk.Advance(d); m.FastForward(d) },
				Caps: storetest.Caps{EventCap: 50}}
		})
	})
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		requireServer(t)
		storetest.RunCapability(t, "EventStore", func(t *testing.T) *storetest.Harness {
			clk := fakeclock.New(start)
			c := redis.NewClient(&redis.Options{Addr: server.addr})
			t.Cleanup(func() { c.Close() })
			prefix := "t" + strconv.FormatInt(prefixes.Add(1), 10)
			s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithPrefix(prefix),
				redisstore.WithLogger(quietLogger()), redisstore.WithEventCap(50))
			require.NoError(t, err)
			return &storetest.Harness{Store: s, Now: clk.Now, Advance: clk.Advance, Caps: storetest.Caps{EventCap: 50}}
		})
	})
}

// pubsubClients returns, from CLIENT LIST, how many connections hold
// subscriptions and how many subscriptions they hold in all.
func pubsubClients(t *testing.T, c *redis.Client) (conns, subs int) {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	require.NoError(t, err)
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "sub="); ok {
				n, _ := strconv.Atoi(v)
				if n > 0 {
					conns++
					subs += n
				}
			}
		}
	}
	return conns, subs
}

// TestWaitOnManyRunsUsesOneConnection waits on 1,000 runs at once and
// counts the subscribed connections and subscriptions the server sees: one
// of each, the events channel, whose messages name the runs that ended.
func TestWaitOnManyRunsUsesOneConnection(t *testing.T) {
	requireServer(t)
	addr, stop, err := runRedisServer()
	require.NoError(t, err)
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	defer c.Close()
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	const n = 1000
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	ids := make([]string, n)
	for i := range ids {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		ids[i] = res.Run.ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := s.RunWait(ctx, &store.RunWaitParams{ID: id})
			if err == nil && run.Status != store.RunCancelled {
				err = errUnexpected(run.Status)
			}
			errs <- err
		}()
	}
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	require.Eventually(t, func() bool {
		_, subs := pubsubClients(t, admin)
		return subs == 1
	}, 30*time.Second, 5*time.Millisecond, "the waits subscribe the events channel")
	conns, subs := pubsubClients(t, admin)
	require.Equal(t, 1, conns, "1,000 waits share one subscribed connection")
	require.Equal(t, 1, subs, "1,000 waits share one subscription")
	for _, id := range ids {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		conns, _ := pubsubClients(t, admin)
		return conns == 0
	}, 10*time.Second, 5*time.Millisecond, "the last wait closes the shared connection")
}

type errUnexpected store.RunStatus

func (e errUnexpected) Error() string { return "unexpected run status " + string(e) }

// TestSubscribeResumesAfterTheConnectionIsKilled follows the store's events
// while the server kills the subscribed connection (and the others) again
// and again: every event arrives, once, in order.
func TestSubscribeResumesAfterTheConnectionIsKilled(t *testing.T) {
	requireServer(t)
	addr, stop, err := runRedisServer()
	require.NoError(t, err)
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	sched, err := plait.New(s)
	require.NoError(t, err)
	sub, err := sched.Subscribe(ctx, &plait.SubscribeFilter{Types: []store.StoreEventType{store.RunEventType(store.RunPending)}})
	require.NoError(t, err)

	const n = 60
	got := make(chan string, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(got) < n {
			ev, err := sub.Next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue // a cut connection: the next call resumes from the cursor
			}
			got <- ev.RunID
		}
	}()
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	var want []string
	for i := 0; i < n; i++ {
		if i%10 == 5 {
			// cut the subscribed connection while the reader waits on it.
			require.Eventually(t, func() bool { conns, _ := pubsubClients(t, admin); return conns == 1 }, 10*time.Second, time.Millisecond)
			require.NoError(t, admin.Do(ctx, "client", "kill", "type", "pubsub").Err())
		}
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		want = append(want, res.Run.ID)
	}
	<-done
	close(got)
	var seen []string
	for id := range got {
		seen = append(seen, id)
	}
	require.Equal(t, want, seen, "every event once, in order, across the cuts")
}
