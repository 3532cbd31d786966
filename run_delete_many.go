package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// RunDeleteMany deletes finished runs as [Scheduler.RunDelete] does, at
// most [store.GetManyMax] of them in one call, and answers one error per
// id in the order given: nil for a run deleted, [ErrRunActive] for one
// that has not finished, [ErrNotFound] for an unknown one. The second
// result is the failure of the call as a whole. A store without
// [store.RunDeleteManyStore] answers ErrUnsupported.
func (s *Scheduler) RunDeleteMany(ctx context.Context, ids ...string) ([]error, error) {
	ds, err := capability[store.RunDeleteManyStore](s.store, "RunDeleteManyStore")
	if err != nil {
		return nil, err
	}
	p := &store.RunDeleteManyParams{IDs: ids}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []error{}, nil
	}
	return ds.RunDeleteMany(ctx, p)
}
