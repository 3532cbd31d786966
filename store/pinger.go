package store

import (
	"context"
	"time"
)

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
