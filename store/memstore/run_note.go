package memstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// RunNote records a note in the run's history: one event, changing no
// record. See [store.RunNoteStore].
func (s *Store) RunNote(ctx context.Context, params *store.RunNoteParams) error {
	if err := params.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return err
	}
	s.appendEventLocked(r, evRec{kind: evRunNote, note: params.Text, at: s.now().UnixNano()})
	return nil
}
