package plait

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

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
