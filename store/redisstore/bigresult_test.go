package redisstore_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// logRecords keeps the messages a store logs.
type logRecords struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += " " + a.String()
		return true
	})
	l.msgs = append(l.msgs, msg)
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

func (l *logRecords) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// TestBigResultFailsAlone runs a workflow of 8 tasks that finish together,
// one of them returning a 2 MiB result, on a redis-server that refuses
// arguments over 1 MB, with WithMaxResultBytes at its 32 MiB default. The
// 7 small results are recorded at once, the big one fails with an error
// that says why, and the run ends. Where CONFIG GET answers, New lowers
// the limit to the server's and the big result is refused before it is
// sent. Where the server refuses CONFIG, Redis refuses the batch, and the
// engine splits it until the big outcome is alone and fails it; Redis
// closes the connection after its refusal, so a try that was still
// sending the 2 MiB loses the reply to a reset and is tried again as any
// transport failure is, which may take seconds.
func TestBigResultFailsAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
		// want is in the big task's error; the run ends within.
		want   string
		within time.Duration
	}{
		{"limit read", nil, "result of 2097154 bytes, the limit is 1048575", 5 * time.Second},
		{"config refused", []string{"--rename-command", "CONFIG", ""}, "invalid bulk length", 45 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, err := redistest.Start(append([]string{"--proto-max-bulk-len", "1mb"}, tc.extra...)...)
			if err != nil {
				redistest.Skip(t, err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { _ = client.Close() })
			logs := &logRecords{}
			s, err := redisstore.New(context.Background(), client, redisstore.WithLogger(slog.New(logs)))
			require.NoError(t, err)
			runBigResult(t, s, tc.want, tc.within)
			lowered := logs.matching("proto-max-bulk-len")
			if tc.extra == nil {
				require.Len(t, lowered, 1, "New says once that the server's limit lowers the store's")
				require.Contains(t, lowered[0], "INFO")
				require.Contains(t, lowered[0], "max-result-bytes=1048575")
			} else {
				require.Empty(t, lowered, "a server that refuses CONFIG keeps the option's limit")
			}
		})
	}
}

// gatedStore holds the finish calls that carry an outcome of the holder
// run until open is closed, and reports each on held: while both of the
// Scheduler's drivers wait in one, the outcomes of the 8 tasks queue up
// behind them, to go in one batch.
type gatedStore struct {
	*redisstore.Store
	holder string
	held   chan struct{}
	open   chan struct{}
	// batches are the sizes of the finish calls with outcomes of other
	// runs, in order.
	mu      sync.Mutex
	batches []int
}

func (g *gatedStore) TaskFinishClaim(ctx context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	others := 0
	for _, o := range params.Finish.Outcomes {
		if o.Lease.RunID == g.holder {
			g.held <- struct{}{}
			<-g.open
		} else {
			others++
		}
	}
	if others > 0 {
		g.mu.Lock()
		g.batches = append(g.batches, others)
		g.mu.Unlock()
	}
	return g.Store.TaskFinishClaim(ctx, params)
}

// taskResult is what the 8 tasks return; noticeCodec says when it has
// encoded one, the last step before its outcome is queued.
type taskResult string

type noticeCodec struct {
	plait.JSONCodec
	encoded chan struct{}
}

func (c noticeCodec) Marshal(v any) ([]byte, error) {
	b, err := c.JSONCodec.Marshal(v)
	if _, ok := v.(taskResult); ok {
		c.encoded <- struct{}{}
	}
	return b, err
}

// runBigResult runs the 8 tasks on s, and two holder tasks of another run
// that keep the drivers busy while the 8 return, and checks what became of
// them.
func runBigResult(t *testing.T, s *redisstore.Store, want string, within time.Duration) {
	const n = 8
	ctx, cancel := context.WithTimeout(context.Background(), within+15*time.Second)
	defer cancel()
	g := &gatedStore{Store: s, held: make(chan struct{}), open: make(chan struct{})}
	var (
		mu        sync.Mutex
		succeeded = map[string]time.Time{}
		failed    = map[string]error{}
		// reported is closed once the 8 attempts were reported: the
		// events follow the store's answer, so may come after RunWait's.
		reported     = make(chan struct{})
		reportedOnce sync.Once
	)
	codec := noticeCodec{encoded: make(chan struct{}, n)}
	sched, err := plait.New(g, plait.WithConcurrency(n+2), plait.WithLogger(quietLogger()), plait.WithCodec(codec),
		plait.WithObserver(func(ev plait.Event) {
			if ev.RunID == g.holder {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case plait.EventTaskSucceeded:
				succeeded[ev.Task] = time.Now()
			case plait.EventTaskFailed:
				failed[ev.Task] = ev.Err
			default:
				return
			}
			if len(succeeded)+len(failed) == n {
				reportedOnce.Do(func() { close(reported) })
			}
		}))
	require.NoError(t, err)
	var started atomic.Int32
	all := make(chan struct{})
	begun := func() {
		if started.Add(1) == n+2 {
			close(all)
		}
	}
	holds := map[string]chan struct{}{"h1": make(chan struct{}), "h2": make(chan struct{})}
	require.NoError(t, sched.Handle("hold", func(ctx context.Context, task *plait.Task) (any, error) {
		begun()
		<-holds[task.Name]
		return nil, nil
	}))
	release := make(chan struct{})
	require.NoError(t, sched.Handle("h", func(ctx context.Context, task *plait.Task) (any, error) {
		begun()
		select {
		case <-release:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if task.Name == "big" {
			return taskResult(strings.Repeat("b", 2<<20)), nil // 2 MiB + 2 bytes of JSON
		}
		return taskResult("small " + task.Name), nil
	}))
	holder, err := sched.Submit(ctx, plait.NewWorkflow("hold").Task("h1", "hold", nil).Task("h2", "hold", nil))
	require.NoError(t, err)
	g.holder = holder.ID
	wf := plait.NewWorkflow("batch").Task("big", "h", nil)
	for i := 1; i < n; i++ {
		wf.Task("t"+strconv.Itoa(i), "h", nil)
	}
	run, err := sched.Submit(ctx, wf)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- sched.Run(runCtx) }()
	defer func() {
		stop()
		require.NoError(t, <-ran)
	}()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal(what)
		}
	}
	wait(all, "the 10 tasks never all started")
	// One holder outcome per driver: each waits in its finish call.
	close(holds["h1"])
	wait(g.held, "the first holder's outcome was never written")
	close(holds["h2"])
	wait(g.held, "the second holder's outcome was never written")
	close(release)
	for range n {
		wait(codec.encoded, "the 8 tasks never all returned")
	}
	opened := time.Now()
	close(g.open)
	final, err := sched.RunWait(ctx, run.ID)
	if err != nil {
		mu.Lock()
		t.Fatalf("the run did not end (%v): %d of the small tasks recorded, batches %v, big failed: %v", err, len(succeeded), g.batches, failed["big"])
	}
	ended := time.Since(opened)
	require.Equal(t, store.RunFailed, final.Status)
	wait(reported, "the 8 attempts were never all reported")
	mu.Lock()
	defer mu.Unlock()
	var last time.Duration
	for _, ti := range final.Tasks {
		if ti.Name == "big" {
			require.Equal(t, store.TaskFailed, ti.Status)
			require.Contains(t, ti.Error, want)
			require.ErrorContains(t, failed["big"], want)
			continue
		}
		require.Equal(t, store.TaskSucceeded, ti.Status, "task %s", ti.Name)
		require.Equal(t, `"small `+ti.Name+`"`, string(ti.Result))
		require.Contains(t, succeeded, ti.Name)
		last = max(last, succeeded[ti.Name].Sub(opened))
	}
	require.Less(t, ended, within, "the run ends promptly")
	g.mu.Lock()
	defer g.mu.Unlock()
	t.Logf("batches %v; 7 small tasks recorded %v after the drivers were free; run ended after %v; big: %s",
		g.batches, last.Round(time.Millisecond), ended.Round(time.Millisecond), failed["big"])
}

// TestClusterResultLimitIsTheSmallestMasters: on a Cluster, New reads
// proto-max-bulk-len from every master and caps results at the smallest.
func TestClusterResultLimitIsTheSmallestMasters(t *testing.T) {
	t.Parallel()
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	ctx := context.Background()
	one := redis.NewClient(&redis.Options{Addr: cluster.Addrs[1]})
	require.NoError(t, one.ConfigSet(ctx, "proto-max-bulk-len", "2mb").Err())
	require.NoError(t, one.Close())
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	logs := &logRecords{}
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(slog.New(logs)), redisstore.WithPrefix("bulk"))
	require.NoError(t, err)
	lowered := logs.matching("proto-max-bulk-len")
	require.Len(t, lowered, 1)
	require.Contains(t, lowered[0], "proto-max-bulk-len=2097152")
	require.Contains(t, lowered[0], "max-result-bytes=2097151")
	require.Contains(t, lowered[0], "configured=33554432")

	res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf",
		Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}})
	require.NoError(t, err)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	require.Equal(t, res.Run.ID, claimed.Tasks[0].Lease.RunID)
	fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
		{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded, Result: []byte(strings.Repeat("r", 2097152))}}})
	require.NoError(t, err)
	require.ErrorIs(t, fin[0].Err, store.ErrResultTooLarge)
	require.ErrorContains(t, fin[0].Err, "the limit is 2097151")
}

// TestResultLimitIsTheServersLessTheFlagByte: on a server whose
// proto-max-bulk-len is 1 MB, a result of 1 MB less one byte, which goes
// to Redis as an argument of exactly 1 MB with its flag byte, applies, and
// one byte more is answered ErrResultTooLarge without reaching Redis.
func TestResultLimitIsTheServersLessTheFlagByte(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, []string{"--proto-max-bulk-len", "1mb"})
	e.createOneTaskRuns(t, 2)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 2, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 2)
	outs := succeeded(claimed.Tasks)
	outs[0].Result = []byte(strings.Repeat("r", 1<<20-1))
	outs[1].Result = []byte(strings.Repeat("r", 1<<20))
	res, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.ErrorIs(t, res[1].Err, store.ErrResultTooLarge)
	run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: claimed.Tasks[0].Lease.RunID})
	require.NoError(t, err)
	require.Len(t, run.Tasks[0].Result, 1<<20-1)
}
