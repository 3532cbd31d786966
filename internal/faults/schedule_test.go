package faults_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// Environment of a schedule leader subprocess: the test binary re-executes
// itself running only TestScheduleLeaderProcess, which leads schedules
// until SIGTERM.
const (
	envSchedRedis  = "PLAIT_SCHED_REDIS"
	envSchedPrefix = "PLAIT_SCHED_PREFIX"
	envSchedName   = "PLAIT_SCHED_NAME"
)

// Leader timing of the subprocesses: a dead leader is replaced within about
// a lease and a tick, so killing it misses two instants or so, which the
// next leader catches up.
const (
	schedLease = 2500 * time.Millisecond
	schedTick  = 100 * time.Millisecond
)

// TestScheduleLeaderProcess is the body of a subprocess of
// TestScheduleLeaderKilled; run directly, it skips.
func TestScheduleLeaderProcess(t *testing.T) {
	addr := os.Getenv(envSchedRedis)
	if addr == "" {
		t.Skip("runs as a subprocess of TestScheduleLeaderKilled")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := redisstore.New(ctx, client, redisstore.WithPrefix(os.Getenv(envSchedPrefix)), redisstore.WithLogger(quiet))
	require.NoError(t, err)
	s, err := plait.New(store, plait.WithWorkerID(os.Getenv(envSchedName)), plait.WithRemoteHandlers(),
		plait.WithQueues("nobody"), plait.WithLeaderLease(schedLease), plait.WithScheduleTick(schedTick), plait.WithLogger(quiet))
	require.NoError(t, err)
	require.NoError(t, s.Run(ctx))
}

func (e *env) leaderProcess(t *testing.T, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestScheduleLeaderProcess$")
	cmd.Env = append(os.Environ(), envSchedRedis+"="+e.server.Addr, envSchedPrefix+"="+e.prefix, envSchedName+"="+name)
	startProcess(t, cmd)
	return cmd
}

// firedRun is a run a schedule fired, as the store holds it.
type firedRun struct {
	id      string
	instant time.Time
	created time.Time
}

// firedRuns reads every run of the prefix; SCAN is for tests only.
func (e *env) firedRuns(t *testing.T) []firedRun {
	t.Helper()
	c := e.server.Client()
	defer c.Close()
	ctx := context.Background()
	var out []firedRun
	iter := c.Scan(ctx, 0, e.prefix+":{*}:r:*", 1000).Iterator()
	for iter.Next(ctx) {
		id := iter.Val()[strings.LastIndex(iter.Val(), ":")+1:]
		run, err := e.s.RunGet(ctx, id)
		require.NoError(t, err)
		at, err := time.Parse(time.RFC3339Nano, run.Metadata[plait.MetadataInstant])
		require.NoError(t, err, "run %s carries its instant", id)
		out = append(out, firedRun{id: id, instant: at, created: run.CreatedAt})
	}
	require.NoError(t, iter.Err())
	sort.Slice(out, func(i, j int) bool { return out[i].instant.Before(out[j].instant) })
	return out
}

// leaderName reads the worker id of the lease holder (the holder is the
// worker id and a nonce).
func (e *env) leaderName(t *testing.T) string {
	t.Helper()
	c := e.server.Client()
	defer c.Close()
	h, err := c.HGet(context.Background(), e.prefix+":{sched}:leader", "holder").Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return h[:max(strings.LastIndex(h, "."), 0)]
}

// TestScheduleLeaderKilled runs three processes leading an every-second
// schedule, SIGKILLs the leader after its third instant, and checks that
// the ten instants from the first each have exactly one run: the next
// leader fires the instants missed while the lease ran out, once each, as
// CatchUpEach states.
func TestScheduleLeaderKilled(t *testing.T) {
	if os.Getenv(envSchedRedis) != "" {
		t.Skip("in a subprocess")
	}
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.s.ScheduleSave(ctx, &plait.Schedule{
		Name: "every-second", Spec: "@every 1s", CatchUp: plait.CatchUpEach, CatchUpWindow: 30 * time.Second,
		Workflow: plait.NewWorkflow("tick").Task("a", "step", nil),
	})
	require.NoError(t, err)
	info, err := e.s.ScheduleGet(ctx, "every-second")
	require.NoError(t, err)
	first := info.NextFire
	last := first.Add(9 * time.Second)

	procs := map[string]*exec.Cmd{}
	for _, n := range []string{"p1", "p2", "p3"} {
		procs[n] = e.leaderProcess(t, n)
	}
	var victim string
	e.waitRuns(t, "three instants fired", func(runs []firedRun) bool {
		victim = e.leaderName(t)
		return len(runs) >= 3 && victim != ""
	})
	require.NoError(t, procs[victim].Process.Kill())
	runs := e.waitRuns(t, "ten instants fired", func(runs []firedRun) bool {
		return len(runs) > 0 && !runs[len(runs)-1].instant.Before(last)
	})
	require.NotEqual(t, victim, e.leaderName(t), "another process leads")

	seen := map[time.Time]string{}
	var delays []time.Duration
	for _, r := range runs {
		prev, dup := seen[r.instant]
		require.False(t, dup, "instant %v fired twice: runs %s and %s", r.instant, prev, r.id)
		seen[r.instant] = r.id
		delays = append(delays, r.created.Sub(r.instant))
	}
	inRange := 0
	for at := range seen {
		if !at.Before(first) && !at.After(last) {
			inRange++
		}
	}
	require.Equal(t, 10, inRange, "exactly one run per instant of the ten")
	for i := 0; i < 10; i++ {
		at := first.Add(time.Duration(i) * time.Second)
		require.Contains(t, seen, at.UTC(), "instant %d (%v) has a run", i, at)
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	require.Greater(t, delays[len(delays)-1], 500*time.Millisecond, "the killed leader missed instants the next one caught up")
	t.Logf("%d runs for %d instants; leader %s killed; instant to run delay: min %v, median %v, max %v (the max includes the takeover)",
		len(runs), len(seen), victim, delays[0], delays[len(delays)/2], delays[len(delays)-1])
}

// waitRuns re-reads the runs until cond holds. The leaders are other
// processes, so there is no in-process event to wait on.
func (e *env) waitRuns(t *testing.T, what string, cond func([]firedRun) bool) []firedRun {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		runs := e.firedRuns(t)
		if cond(runs) {
			return runs
		}
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}
