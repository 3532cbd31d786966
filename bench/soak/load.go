package main

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/plaitdag/plait"
)

// load submits the mixed runs at a steady rate and waits for each through
// the store (RunWait), recording its end-to-end latency (submit to the
// run's end as RunWait reports it) and checking it completed once: status
// completed, no task with two successful attempts.
type load struct {
	s    *plait.Scheduler
	wfs  []*plait.Workflow
	rate float64

	mu        sync.Mutex
	submitted int
	refused   int
	done      int
	completed int
	// lost are runs whose submit was acknowledged and that the store no
	// longer knows; stuck are runs still not finished at the wait's limit;
	// notCompleted ended in another status.
	lost, stuck, notCompleted int
	// lostAt holds when each lost run was submitted.
	lostAt []time.Time
	// twice counts tasks with two successful attempts; crashes the leases
	// lost (a killed worker's tasks), retries the attempts past the first.
	twice, crashes, retries int
	// window holds the latencies of the runs that ended since the last
	// sample.
	window  []time.Duration
	waiters sync.WaitGroup
	stopped chan struct{}
	ended   chan struct{}
}

func newLoad(s *plait.Scheduler, rate float64) *load {
	return &load{s: s, wfs: workflows(), rate: rate, stopped: make(chan struct{}), ended: make(chan struct{})}
}

// run submits until stop is called.
func (l *load) run(ctx context.Context) {
	defer close(l.ended)
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-l.stopped:
			return
		case <-tick.C:
		}
		begin := time.Now()
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		run, err := l.s.Submit(sctx, l.wfs[i%len(l.wfs)])
		cancel()
		l.mu.Lock()
		if err != nil {
			l.refused++
			l.mu.Unlock()
			continue
		}
		l.submitted++
		l.mu.Unlock()
		l.waiters.Add(1)
		go l.wait(ctx, run.ID, begin)
	}
}

// waitLimit bounds the wait for one run: far above any latency the soak
// expects, short enough to end a soak whose run was lost.
const waitLimit = 5 * time.Minute

func (l *load) wait(ctx context.Context, id string, begin time.Time) {
	defer l.waiters.Done()
	wctx, cancel := context.WithTimeout(ctx, waitLimit)
	run, err := l.s.RunWait(wctx, id)
	cancel()
	took := time.Since(begin)
	if err != nil {
		// A run the store forgot (a failover to a replica that had not
		// got it) answers not found; one still going is stuck.
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, gerr := l.s.RunGet(gctx, id)
		cancel()
		l.mu.Lock()
		if errors.Is(err, plait.ErrNotFound) || errors.Is(gerr, plait.ErrNotFound) {
			l.lost++
			l.lostAt = append(l.lostAt, begin)
		} else {
			l.stuck++
		}
		l.done++
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	l.window = append(l.window, took)
	if run.Status != plait.RunCompleted {
		l.notCompleted++
		return
	}
	l.completed++
	for _, ti := range run.Tasks {
		ok := 0
		for _, a := range ti.Attempts {
			if a.Outcome == "succeeded" {
				ok++
			}
		}
		if ok > 1 {
			l.twice++
		}
		l.crashes += ti.Crashes
		if len(ti.Attempts) > 1 {
			l.retries += len(ti.Attempts) - 1
		}
	}
}

// stop ends the submits and waits for the submitter to return.
func (l *load) stop() {
	close(l.stopped)
	<-l.ended
}

// settle waits until every submitted run was waited for, or limit passes;
// it reports whether they all were.
func (l *load) settle(limit time.Duration) bool {
	all := make(chan struct{})
	go func() { l.waiters.Wait(); close(all) }()
	select {
	case <-all:
		return true
	case <-time.After(limit):
		return false
	}
}

// lostSpan answers when the first and the last lost run were submitted.
func (l *load) lostSpan() (first, last time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.lostAt {
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	return first, last
}

// tally is the load's counters at one instant, with the latency
// percentiles of the runs that ended since the previous tally.
type tally struct {
	submitted, refused, done, completed int
	lost, stuck, notCompleted           int
	twice, crashes, retries             int
	ended                               int
	p50, p99                            time.Duration
}

func (l *load) tally() tally {
	l.mu.Lock()
	w := l.window
	l.window = nil
	t := tally{submitted: l.submitted, refused: l.refused, done: l.done, completed: l.completed,
		lost: l.lost, stuck: l.stuck, notCompleted: l.notCompleted,
		twice: l.twice, crashes: l.crashes, retries: l.retries, ended: len(w)}
	l.mu.Unlock()
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	if len(w) > 0 {
		t.p50 = w[len(w)/2]
		t.p99 = w[min(len(w)-1, len(w)*99/100)]
	}
	return t
}
