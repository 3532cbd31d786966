package worker

import (
	"sync/atomic"
	"time"
)

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

// HealthSnapshot is what a Pool reports of itself for Scheduler.Health.
type HealthSnapshot struct {
	// Running is false once Run began stopping.
	Running bool
	// Workers and Busy count the worker goroutines and those running a
	// handler; Leases the attempts this process holds.
	Workers, Busy, Leases int
	// StartedAt, LeasesExtendedAt and SweptAt are the last times, on the
	// scheduler's clock, Run started, extended its leases and swept.
	StartedAt, LeasesExtendedAt, SweptAt time.Time
}

// healthSnapshot reads the health of the pool p.
func (p *pool) healthSnapshot() HealthSnapshot {
	h := &p.health
	p.mu.Lock()
	leases := len(p.execs)
	p.mu.Unlock()
	return HealthSnapshot{
		Running: !p.stopping.Load(), Workers: int(h.workers.Load()), Busy: int(h.busy.Load()), Leases: leases,
		StartedAt: unixTime(h.startedAt.Load()), LeasesExtendedAt: unixTime(h.extendedAt.Load()), SweptAt: unixTime(h.sweptAt.Load()),
	}
}
