package plait

import (
	"context"
	"errors"
	"time"
)

// A [Store] is the execution core and nothing more. Everything else a store
// can offer arrives as its own optional interface, declared here next to
// Store and discovered by a type assertion, the way database/sql/driver
// grows: a store implements the capabilities it can, and the [Scheduler]
// method that needs one it lacks answers an [*UnsupportedError]. The
// conformance suite in store/storetest runs one suite per capability the
// store under test implements.

// ErrUnsupported is the category of [*UnsupportedError]: the store does not
// implement a capability the call needs.
var ErrUnsupported = errors.New("plait: unsupported by the store")

// UnsupportedError names the capability a store lacks. It matches
// [ErrUnsupported] with errors.Is.
type UnsupportedError struct {
	// Capability is the name of the missing interface, such as "Pinger".
	Capability string
}

// Error names the missing capability.
func (e *UnsupportedError) Error() string {
	return "plait: the store does not implement " + e.Capability
}

// Is matches [ErrUnsupported].
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// capability returns the store as the capability C, or an
// [*UnsupportedError] naming it.
func capability[C any](store Store, name string) (C, error) {
	c, ok := store.(C)
	if !ok {
		return c, &UnsupportedError{Capability: name}
	}
	return c, nil
}

// Pinger is the capability of checking that the store answers: the health
// check of a host service. Both shipped stores implement it.
type Pinger interface {
	// StorePing makes one round trip to the backend and returns its clock.
	// It changes nothing.
	StorePing(ctx context.Context, params *StorePingParams) (*StorePingResult, error)
}

// StorePingParams are the arguments of [Pinger.StorePing]. It has no field
// yet; it exists so fields can be added.
type StorePingParams struct{}

// StorePingResult is the answer of [Pinger.StorePing].
type StorePingResult struct {
	// Now is the store's clock when it answered.
	Now time.Time
}

// Ping checks that the store answers and returns how long the round trip
// took and the store's clock, for health checks. It returns an
// [*UnsupportedError] when the store does not implement [Pinger].
func (s *Scheduler) Ping(ctx context.Context) (*PingReport, error) {
	p, err := capability[Pinger](s.store, "Pinger")
	if err != nil {
		return nil, err
	}
	start := s.cfg.clock.Now()
	res, err := p.StorePing(ctx, &StorePingParams{})
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
