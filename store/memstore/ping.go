package memstore

import (
	"context"

	"github.com/plaitdag/plait"
)

// StorePing answers with the store's clock; a memory store is always
// reachable. See [plait.Pinger].
func (s *Store) StorePing(ctx context.Context, params *plait.StorePingParams) (*plait.StorePingResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &plait.StorePingResult{Now: s.clock.Now()}, nil
}
