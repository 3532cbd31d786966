package redisstore_test

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestScheduleCost measures what schedules cost on a private redis-server:
// the memory of 10,000 idle schedules, the CPU of the leader (this process
// and the server) per second while they are idle, and the delay from an
// instant to its run being claimable. It takes about 35 s and runs only
// with PLAIT_SCHEDULE_COST=1:
//
//	PLAIT_SCHEDULE_COST=1 go test -run TestScheduleCost -v ./store/redisstore
func TestScheduleCost(t *testing.T) {
	if os.Getenv("PLAIT_SCHEDULE_COST") != "1" {
		t.Skip("set PLAIT_SCHEDULE_COST=1 to measure")
	}
	addr, stop, err := runRedisServer()
	if err != nil {
		t.Skip(err)
	}
	defer stop()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info := func(section, field string) float64 {
		s, err := c.Info(ctx, section).Result()
		require.NoError(t, err)
		for _, l := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(l, field+":"); ok {
				f, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err)
				return f
			}
		}
		t.Fatalf("no %s in INFO %s", field, section)
		return 0
	}
	store, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	s, err := plait.New(store, plait.WithRemoteHandlers(), plait.WithLogger(quietLogger()), plait.WithQueues("nobody"))
	require.NoError(t, err)
	wf := plait.NewWorkflow("report").Task("report", "report", map[string]string{"to": "ops"})

	const idle = 10000
	before := info("memory", "used_memory")
	for i := 0; i < idle; i++ {
		_, err := s.ScheduleSave(ctx, &plait.Schedule{Name: "idle-" + strconv.Itoa(i), Spec: "0 3 * * *", TimeZone: "Europe/Paris", Workflow: wf})
		require.NoError(t, err)
	}
	after := info("memory", "used_memory")
	t.Logf("memory: %d idle schedules take %.1f MiB, %.0f bytes each", idle, (after-before)/(1<<20), (after-before)/idle)

	cpu := func() time.Duration {
		var ru syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	serverCPU := func() float64 { return info("cpu", "used_cpu_user") + info("cpu", "used_cpu_sys") }
	// measure runs sc for ten seconds and answers this process's and the
	// server's CPU per second.
	measure := func(sc *plait.Scheduler) (float64, float64, context.CancelFunc, chan error) {
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- sc.Run(runCtx) }()
		time.Sleep(time.Second) // measurement warm-up, not a condition
		p0, s0, w0 := cpu(), serverCPU(), time.Now()
		time.Sleep(10 * time.Second) // the measured interval
		p1, s1, w1 := cpu(), serverCPU(), time.Now()
		secs := w1.Sub(w0).Seconds()
		return float64(p1-p0) / float64(time.Millisecond) / secs, (s1 - s0) * 1000 / secs, cancel, done
	}
	follower, err := plait.New(store, plait.WithRemoteHandlers(), plait.WithLogger(quietLogger()), plait.WithQueues("nobody"),
		plait.WithoutScheduleLeader())
	require.NoError(t, err)
	bp, bs, stopBase, baseDone := measure(follower)
	stopBase()
	require.NoError(t, <-baseDone)
	lp, ls, cancel, done := measure(s)
	t.Logf("cpu with %d idle schedules, ms per second: Run without leading %.2f (redis-server %.2f); Run leading %.2f (redis-server %.2f); the leader's share %.2f (redis-server %.2f)",
		idle, bp, bs, lp, ls, lp-bp, ls-bs)

	// Delay: 100 schedules every second, ten instants each.
	const busy = 100
	for i := 0; i < busy; i++ {
		_, err := s.ScheduleSave(ctx, &plait.Schedule{Name: "busy-" + strconv.Itoa(i), Spec: "@every 1s", Workflow: wf})
		require.NoError(t, err)
	}
	time.Sleep(10500 * time.Millisecond) // the measured interval
	cancel()
	require.NoError(t, <-done)
	var delays []time.Duration
	for i := 0; i < busy; i++ {
		si, err := s.ScheduleGet(ctx, "busy-"+strconv.Itoa(i))
		require.NoError(t, err)
		for at := si.LastFire; !at.IsZero(); at = at.Add(-time.Second) {
			id, err := c.Get(ctx, "plait:{0}:k:plait-sched.busy-"+strconv.Itoa(i)+"."+strconv.FormatInt(at.UnixMilli(), 10)).Result()
			if err == redis.Nil {
				break
			}
			require.NoError(t, err)
			run, err := s.RunGet(ctx, id)
			require.NoError(t, err)
			delays = append(delays, run.CreatedAt.Sub(at))
		}
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))] }
	t.Logf("delay from instant to claimable run, %d runs of %d schedules firing on the same second: p50 %v, p99 %v, max %v",
		len(delays), busy, q(0.5), q(0.99), delays[len(delays)-1])
}
