package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// background is how many finished one-task runs every phase starts with.
// Redis keeps a small sorted set as a listpack, where an insert costs in
// proportion to its length, and switches to a skiplist past 128 entries:
// without them a phase on an empty database would pay for the listpack
// stage of the run indexes, which a store in use is long past.
const background = 500

// env is what the phases share: the server under callgrind and a client
// of its own for the bookkeeping around each phase.
type env struct {
	cg      *callgrind
	admin   *redis.Client
	payload plait.Raw
	quiet   *slog.Logger
}

func newEnv(cg *callgrind) *env {
	return &env{
		cg:      cg,
		admin:   redis.NewClient(&redis.Options{Addr: cg.addr}),
		payload: plait.Raw(strings.Repeat("p", payloadSize)),
		quiet:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// plaitEnv is one phase's client, store and scheduler.
type plaitEnv struct {
	client *redis.Client
	store  *redisstore.Store
	*sched
}

// sched is a scheduler that counts its succeeded tasks.
type sched struct {
	*plait.Scheduler
	succeeded atomic.Int64
	waiting   atomic.Pointer[waiter]
}

// waiter is what runUntil waits for: done is closed when the count of
// succeeded tasks reaches target.
type waiter struct {
	target int64
	done   chan struct{}
}

// open empties the database (the function library stays loaded), builds a
// store and a scheduler with opts on a client of their own, and runs the
// background runs to their end.
func (e *env) open(ctx context.Context, opts ...plait.Option) (*plaitEnv, error) {
	if err := e.admin.FlushAll(ctx).Err(); err != nil {
		return nil, err
	}
	p := &plaitEnv{client: redis.NewClient(&redis.Options{Addr: e.cg.addr})}
	ok := false
	defer func() {
		if !ok {
			p.client.Close()
		}
	}()
	var err error
	p.store, err = redisstore.New(ctx, p.client, redisstore.WithRetention(time.Hour), redisstore.WithLogger(e.quiet))
	if err != nil {
		return nil, err
	}
	bg, err := e.newSched(p.store, plait.WithConcurrency(batch))
	if err != nil {
		return nil, err
	}
	if err := e.submitMany(ctx, bg, background); err != nil {
		return nil, err
	}
	if err := bg.runUntil(ctx, background, func(run func() error) error { return run() }); err != nil {
		return nil, fmt.Errorf("background runs: %w", err)
	}
	if p.sched, err = e.newSched(p.store, opts...); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

// newSched builds a scheduler with the no-op handler. What it does by the
// clock rather than for the work is set far apart or off: heartbeat, lease
// sweep, janitor, schedule leader, lease extensions (a long lease), and
// the idle wait, after which an idle worker claims again even if nothing
// woke it. Under callgrind a phase lasts about fifty times longer than
// natively, so those would add calls in proportion to how slow the run
// was.
func (e *env) newSched(st *redisstore.Store, opts ...plait.Option) (*sched, error) {
	s := &sched{}
	base := []plait.Option{
		plait.WithLogger(e.quiet),
		plait.WithObserver(s.observe),
		plait.WithLeaseDuration(10 * time.Minute),
		plait.WithSweepInterval(time.Hour),
		plait.WithJanitorInterval(time.Hour),
		plait.WithNodeHeartbeat(time.Hour),
		plait.WithIdleWait(time.Hour),
		plait.WithoutScheduleLeader(),
	}
	var err error
	if s.Scheduler, err = plait.New(st, append(base, opts...)...); err != nil {
		return nil, err
	}
	return s, s.Handle("noop", func(context.Context, *plait.Task) (any, error) { return nil, nil })
}

func (s *sched) observe(ev plait.Event) {
	if ev.Type != plait.EventTaskSucceeded {
		return
	}
	n := s.succeeded.Add(1)
	if w := s.waiting.Load(); w != nil && n == w.target {
		close(w.done)
	}
}

// runUntil runs the scheduler's workers until n more tasks have succeeded
// (the event comes after the store has recorded the outcome), then stops
// them. Starting the workers and waiting for the tasks happen inside wrap,
// so that wrap can count them; the shutdown is outside it.
func (s *sched) runUntil(ctx context.Context, n int, wrap func(func() error) error) error {
	w := &waiter{target: s.succeeded.Load() + int64(n), done: make(chan struct{})}
	s.waiting.Store(w)
	defer s.waiting.Store(nil)
	rctx, cancel := context.WithCancel(ctx)
	ended := make(chan error, 1)
	started := false
	defer func() {
		cancel()
		if started {
			<-ended
		}
	}()
	return wrap(func() error {
		started = true
		go func() { ended <- s.Run(rctx) }()
		select {
		case <-w.done:
			return nil
		case err := <-ended:
			ended <- err // for the deferred wait
			return fmt.Errorf("Run returned early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Minute):
			return fmt.Errorf("timeout: %d of %d tasks done", int64(n)-(w.target-s.succeeded.Load()), n)
		}
	})
}

// tally adds up what one phase's counted parts executed.
type tally struct {
	count
	fcalls, seconds float64
}

// measure counts fn under callgrind, as the phase's dump name, and adds
// its instructions and FCALLs to t.
func (e *env) measure(ctx context.Context, name string, t *tally, fn func() error) error {
	if err := e.admin.ConfigResetStat(ctx).Err(); err != nil {
		return err
	}
	t0 := time.Now()
	n, err := e.cg.measure(name, fn)
	if err != nil {
		return err
	}
	t.seconds += time.Since(t0).Seconds()
	f, err := e.fcalls(ctx)
	if err != nil {
		return err
	}
	t.ir += n.ir
	t.cron += n.cron
	t.fcalls += f
	return nil
}

func (t *tally) result(ph phase, ops int) result {
	return result{Phase: ph.name, Unit: ph.unit, Ops: ops, IrPerOp: t.ir / float64(ops),
		FcallPerOp: t.fcalls / float64(ops), CronIr: t.cron, Seconds: t.seconds}
}

// count runs fn under callgrind and turns the count into a result for ops
// operations.
func (e *env) count(ctx context.Context, ph phase, ops int, fn func() error) (result, error) {
	var t tally
	if err := e.measure(ctx, ph.name, &t, fn); err != nil {
		return result{}, err
	}
	return t.result(ph, ops), nil
}

// fcalls reads how many FCALL and FCALL_RO commands ran since the last
// CONFIG RESETSTAT.
func (e *env) fcalls(ctx context.Context) (float64, error) {
	txt, err := e.admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var n float64
	for _, line := range strings.Split(txt, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_fcall" && name != "cmdstat_fcall_ro") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		v, err := strconv.ParseFloat(calls, 64)
		if err != nil {
			return 0, fmt.Errorf("commandstats %q: %w", line, err)
		}
		n += v
	}
	return n, nil
}

func (e *env) oneTask() *plait.Workflow {
	return plait.NewWorkflow("noop").Task("t", "noop", e.payload)
}

// submitMany creates n one-task runs, batch runs per SubmitMany call.
func (e *env) submitMany(ctx context.Context, s *sched, n int) error {
	for done := 0; done < n; {
		k := min(batch, n-done)
		subs := make([]plait.Submission, k)
		for i := range subs {
			subs[i] = plait.Submission{Workflow: e.oneTask()}
		}
		if _, err := s.SubmitMany(ctx, subs); err != nil {
			return err
		}
		done += k
	}
	return nil
}
