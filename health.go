package plait

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// ErrUnhealthy is the category of [*HealthError]: [Scheduler.Health] found
// something wrong.
var ErrUnhealthy = errors.New("plait: unhealthy")

// HealthError lists what [Scheduler.Health] found wrong. It matches
// [ErrUnhealthy] with errors.Is, and unwraps to the store's error when the
// store did not answer.
type HealthError struct {
	// Problems says what is wrong, one sentence each.
	Problems []string
	// Store is the store's error when it did not answer, else nil.
	Store error
}

// Error lists the problems.
func (e *HealthError) Error() string {
	return "plait: unhealthy: " + strings.Join(e.Problems, "; ")
}

// Is matches [ErrUnhealthy].
func (e *HealthError) Is(target error) bool { return target == ErrUnhealthy }

// Unwrap returns the store's error, or nil.
func (e *HealthError) Unwrap() error { return e.Store }

// HealthReport is the answer of [Scheduler.Health]. Times are on the
// scheduler's clock; a zero time means never.
type HealthReport struct {
	// Running reports that Run is working through tasks.
	Running bool
	// StoreChecked reports that the store was asked (it implements
	// [Pinger]); StoreReachable that it answered, in StoreRoundTrip.
	StoreChecked   bool
	StoreReachable bool
	StoreRoundTrip time.Duration
	// Workers is how many worker goroutines are taking work, of
	// Concurrency (a worker stuck in a handler given up on past its timeout
	// is replaced and no longer counted); Busy is how many handlers are
	// running, those given up on included.
	Workers     int
	Concurrency int
	Busy        int
	// Leases is how many attempts this process holds leases for, and
	// LeasesExtendedAt the send time of the lease keeper's last extension
	// the store answered, or of its last round with nothing to extend.
	Leases           int
	LeasesExtendedAt time.Time
	// SweptAt is when this process last completed a sweep of expired
	// leases.
	SweptAt time.Time
}

// healthState is what a Run records for Health.
type healthState struct {
	startedAt  atomic.Int64 // UnixNano on the scheduler's clock
	extendedAt atomic.Int64
	sweptAt    atomic.Int64
	workers    atomic.Int64
	busy       atomic.Int64
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Health checks this scheduler for a host's readiness probe: the store
// answers (one round trip through [Pinger], when the store implements it),
// Run is running with all its workers, the lease keeper extended the leases
// this process holds within the last two of its rounds (two thirds of
// [WithLeaseDuration]), and the sweep of expired leases completed within
// its last three intervals. It returns the report and, when anything is
// wrong, a [*HealthError] listing it; the report is filled in either way.
// A process that only submits and never calls Run is reported as not
// running: probe it with [Scheduler.Ping] instead.
func (s *Scheduler) Health(ctx context.Context) (*HealthReport, error) {
	rep := &HealthReport{Concurrency: s.cfg.concurrency}
	var problems []string
	var storeErr error
	if p, ok := s.store.(store.Pinger); ok {
		rep.StoreChecked = true
		start := s.cfg.clock.Now()
		_, err := p.StorePing(ctx, &store.StorePingParams{})
		rep.StoreRoundTrip = s.cfg.clock.Now().Sub(start)
		if err != nil {
			storeErr = err
			problems = append(problems, "the store does not answer: "+err.Error())
		} else {
			rep.StoreReachable = true
		}
	}
	p := s.pool.Load()
	if p == nil {
		problems = append(problems, "Run is not running")
		return rep, &HealthError{Problems: problems, Store: storeErr}
	}
	rep.Running = !p.stopping.Load()
	if !rep.Running {
		problems = append(problems, "Run is stopping")
	}
	h := &p.health
	rep.Workers = int(h.workers.Load())
	rep.Busy = int(h.busy.Load())
	rep.LeasesExtendedAt = unixTime(h.extendedAt.Load())
	rep.SweptAt = unixTime(h.sweptAt.Load())
	p.mu.Lock()
	rep.Leases = len(p.execs)
	p.mu.Unlock()
	if rep.Running && rep.Workers < s.cfg.concurrency {
		problems = append(problems, "only "+strconv.Itoa(rep.Workers)+" of "+strconv.Itoa(s.cfg.concurrency)+" workers are running")
	}
	now := s.cfg.clock.Now()
	started := unixTime(h.startedAt.Load())
	if rep.Leases > 0 {
		last := maxTime(rep.LeasesExtendedAt, started)
		if d := now.Sub(last); d > 2*s.cfg.leaseDuration/3 {
			problems = append(problems, "leases not extended for "+d.String())
		}
	}
	if d := now.Sub(maxTime(rep.SweptAt, started)); d > 3*s.cfg.sweepInterval {
		problems = append(problems, "no sweep completed for "+d.String())
	}
	if len(problems) > 0 {
		return rep, &HealthError{Problems: problems, Store: storeErr}
	}
	return rep, nil
}
