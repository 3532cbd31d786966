package plait

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
	snap := p.Health()
	rep.Running = snap.Running
	if !rep.Running {
		problems = append(problems, "Run is stopping")
	}
	rep.Workers, rep.Busy, rep.Leases = snap.Workers, snap.Busy, snap.Leases
	rep.LeasesExtendedAt, rep.SweptAt = snap.LeasesExtendedAt, snap.SweptAt
	if rep.Running && rep.Workers < s.cfg.concurrency {
		problems = append(problems, "only "+strconv.Itoa(rep.Workers)+" of "+strconv.Itoa(s.cfg.concurrency)+" workers are running")
	}
	now := s.cfg.clock.Now()
	started := snap.StartedAt
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

// maxTime returns the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// A [Store] is the execution core and nothing more. Everything else a store
// can offer arrives as its own optional interface, declared here next to
// Store and discovered by a type assertion, the way database/sql/driver
// grows: a store implements the capabilities it can, and the [Scheduler]
// method that needs one it lacks answers an [*UnsupportedError]. The
// conformance suite in store/storetest runs one suite per capability the
// store under test implements.

// capability returns the store as the capability C, or an
// [*UnsupportedError] naming it.
func capability[C any](store store.Store, name string) (C, error) {
	c, ok := store.(C)
	if !ok {
		return c, &UnsupportedError{Capability: name}
	}
	return c, nil
}

// Ping checks that the store answers and returns how long the round trip
// took and the store's clock, for health checks. It returns an
// [*UnsupportedError] when the store does not implement [Pinger].
func (s *Scheduler) Ping(ctx context.Context) (*PingReport, error) {
	p, err := capability[store.Pinger](s.store, "Pinger")
	if err != nil {
		return nil, err
	}
	start := s.cfg.clock.Now()
	res, err := p.StorePing(ctx, &store.StorePingParams{})
	if err != nil {
		return nil, err
	}
	return &PingReport{RoundTrip: s.cfg.clock.Now().Sub(start), StoreNow: res.Now}, nil
}

// PingReport is the answer of [Scheduler.Ping].
type PingReport struct {
	// RoundTrip is how long the store took to answer, on the Scheduler's
	// clock.
	RoundTrip time.Duration
	// StoreNow is the store's clock; its distance from the host's clock is
	// the skew plait is immune to, worth watching all the same.
	StoreNow time.Time
}
