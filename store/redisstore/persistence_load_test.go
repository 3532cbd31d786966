package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// The load and the checks of the persistence tests (persistence_test.go),
// which kill redis-server under load: what the store acknowledged before
// the kill must be there, and every run whole or not at all.

const persistLease = time.Minute

// persistLoad is a steady load on one store: producers create runs of a
// chain a -> b, workers claim and finish tasks, and every acknowledged
// write is recorded with the time of its answer.
type persistLoad struct {
	st   *redisstore.Store
	stop chan struct{}
	wg   sync.WaitGroup

	mu sync.Mutex
	// created maps each run whose create was answered to the answer's time.
	created map[string]time.Time
	// finished maps "<run> <task>" to the epoch of the finish answered;
	// ended holds the runs a finish answered completed.
	finished map[string]int64
	ended    map[string]bool
	// more is signalled at every answered create.
	more chan struct{}
}

func startPersistLoad(t *testing.T, addr string, clk *fakeclock.Clock) *persistLoad {
	t.Helper()
	// No client retries: a call that fails is not acknowledged, and is not
	// sent twice behind the test's back.
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	st, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	l := &persistLoad{st: st, stop: make(chan struct{}), created: map[string]time.Time{},
		finished: map[string]int64{}, ended: map[string]bool{}, more: make(chan struct{}, 1)}
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h", Queue: store.DefaultQueue},
		{Name: "b", Handler: "h", Queue: store.DefaultQueue, Deps: []store.Dep{{Task: "a"}}},
	}}
	for i := 0; i < 2; i++ {
		l.wg.Add(2)
		go func() {
			defer l.wg.Done()
			for l.running() {
				res, err := st.RunCreate(context.Background(), &store.RunCreateParams{Workflow: wf})
				if err != nil {
					continue
				}
				l.mu.Lock()
				l.created[res.Run.ID] = time.Now()
				l.mu.Unlock()
				select {
				case l.more <- struct{}{}:
				default:
				}
			}
		}()
		go func(w int) {
			defer l.wg.Done()
			for l.running() {
				_, _ = l.step(context.Background(), st, "w"+strconv.Itoa(w), nil)
			}
		}(i)
	}
	return l
}

func (l *persistLoad) running() bool {
	select {
	case <-l.stop:
		return false
	default:
		return true
	}
}

// step claims up to 8 tasks and finishes them, recording the finishes
// answered; redo, when not nil, collects the ones finished before.
func (l *persistLoad) step(ctx context.Context, st *redisstore.Store, worker string, redo func(key string, completed bool)) (int, error) {
	res, err := st.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: worker, Limit: 8, LeaseDuration: persistLease})
	if err != nil || len(res.Tasks) == 0 {
		return 0, err
	}
	outs := make([]store.TaskOutcome, len(res.Tasks))
	for i, ct := range res.Tasks {
		outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte(`"ok"`)}
	}
	fin, err := st.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: worker, Outcomes: outs})
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range fin {
		if r.Err != nil {
			continue
		}
		key := outs[i].Lease.RunID + " " + outs[i].Lease.Task
		if redo != nil {
			redo(key, r.RunStatus == store.RunCompleted)
		}
		l.finished[key] = outs[i].Lease.Epoch
		if r.RunStatus == store.RunCompleted {
			l.ended[outs[i].Lease.RunID] = true
		}
	}
	return len(res.Tasks), nil
}

// waitCreated waits until n creates have been answered.
func (l *persistLoad) waitCreated(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l.mu.Lock()
		have := len(l.created)
		l.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("only %d creates answered, want %d", have, n)
		}
	}
}

// halt stops the load once the server is gone.
func (l *persistLoad) halt() {
	close(l.stop)
	l.wg.Wait()
}

// check reads every run the store holds (the index of all runs, ia) and
// counts those half applied: a transition whose writes are only partly
// there. Between scripts a run of a -> b is in one of these states, each
// with its queue or lease entry and its counters in step: a ready and b
// pending (a queued), a running and b pending (a leased), a succeeded and
// b ready (b queued), b running (b leased), both succeeded and the run
// completed. A run in the index whose hash is gone is half applied too.
func check(t *testing.T, c *redis.Client, st *redisstore.Store) (runs int, half []string) {
	t.Helper()
	ctx := context.Background()
	ids, err := c.ZRange(ctx, "plait:{0}:ia", 0, -1).Result()
	require.NoError(t, err)
	queued, err := c.LRange(ctx, "plait:{0}:q:"+store.DefaultQueue+":1", 0, -1).Result()
	require.NoError(t, err)
	inQueue := map[string]int{}
	for _, e := range queued {
		inQueue[e]++
	}
	for _, id := range ids {
		run, err := st.RunGet(ctx, &store.RunGetParams{ID: id})
		if err != nil {
			half = append(half, fmt.Sprintf("%s: %v", id, err))
			continue
		}
		a, b := run.Task("a"), run.Task("b")
		bad := func(why string) {
			half = append(half, fmt.Sprintf("%s: %s (a %s, b %s, run %s)", id, why, a.Status, b.Status, run.Status))
		}
		succeeded := 0
		for _, ti := range []*store.TaskInstance{a, b} {
			switch ti.Status {
			case store.TaskSucceeded:
				succeeded++
				if n := len(ti.Attempts); n == 0 || ti.Attempts[n-1].Outcome != "succeeded" {
					bad(ti.Name + " succeeded without its attempt record")
				}
			case store.TaskReady:
				if inQueue[id+" "+ti.Name] != 1 {
					bad(ti.Name + " ready but not queued once")
				}
			case store.TaskRunning:
				if _, err := c.ZScore(ctx, "plait:{0}:active", id+" "+ti.Name).Result(); err != nil {
					bad(ti.Name + " running without a lease entry")
				}
			}
		}
		switch {
		case run.Succeeded != succeeded:
			bad(fmt.Sprintf("run counts %d succeeded, tasks %d", run.Succeeded, succeeded))
		case (succeeded == 2) != (run.Status == store.RunCompleted):
			bad("run status out of step with its tasks")
		case a.Status != store.TaskSucceeded && b.Status != store.TaskPending:
			bad("b released before a succeeded")
		case a.Status == store.TaskSucceeded && b.Status == store.TaskPending:
			bad("a succeeded without releasing b")
		}
	}
	return len(ids), half
}

// drain finishes every run after the restart, as workers would: the
// leases held at the kill run out (the clock moves past them) and the
// sweep requeues their tasks. It counts the tasks finished before the kill
// that run again, and the runs completed twice.
func drain(t *testing.T, l *persistLoad, st *redisstore.Store, clk *fakeclock.Clock) (rerun, twice int) {
	t.Helper()
	ctx := context.Background()
	before := map[string]bool{}
	endedBefore := map[string]bool{}
	l.mu.Lock()
	for k := range l.finished {
		before[k] = true
	}
	for k := range l.ended {
		endedBefore[k] = true
	}
	l.mu.Unlock()
	clk.Advance(persistLease + time.Second)
	for {
		_, err := st.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 1000, CrashLimit: 100})
		require.NoError(t, err)
		n, err := l.step(ctx, st, "after", func(key string, completed bool) {
			if before[key] {
				rerun++
			}
			run, _, _ := cutRun(key)
			if completed && endedBefore[run] {
				twice++
			}
		})
		require.NoError(t, err)
		if n == 0 {
			return rerun, twice
		}
	}
}

func cutRun(key string) (run, task string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == ' ' {
			return key[:i], key[i+1:], true
		}
	}
	return key, "", false
}

// copyDir copies the files of src into dst, which it creates.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err == nil {
			_, err = io.Copy(out, in)
			err = errors.Join(err, out.Close())
		}
		_ = in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
