package memstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// StorePing answers with the store's clock; a memory store is always
// reachable. See [store.Pinger].
func (s *Store) StorePing(ctx context.Context, params *store.StorePingParams) (*store.StorePingResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &store.StorePingResult{Now: s.now()}, nil
}
