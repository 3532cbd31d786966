package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/plaitdag/plait/store"
)

// RunDeleteMany deletes finished runs under one lock, each as RunDelete
// does. See [store.RunDeleteManyStore].
func (s *Store) RunDeleteMany(ctx context.Context, params *store.RunDeleteManyParams) ([]error, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]error, len(params.IDs))
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := map[string]bool{}
	for i, id := range params.IDs {
		r, err := s.runLocked(id)
		switch {
		case err != nil:
			out[i] = err
		case !r.rec.Status.Terminal():
			out[i] = activeErr(r)
		default:
			gone[id] = true
			r.dead = nil
			s.removeLocked(r)
		}
	}
	if len(gone) > 0 {
		// their letters go now, in one pass over the list (RunDelete)
		s.dead = fitted(slices.DeleteFunc(s.dead, func(d taskRef) bool { return gone[d.run] }))
	}
	return out, nil
}

// activeErr is the answer for a run that has not finished, as RunDelete
// gives it.
func activeErr(r *run) error {
	return fmt.Errorf("memstore: delete run %s (%s): %w", r.rec.ID, r.rec.Status, store.ErrRunActive)
}
