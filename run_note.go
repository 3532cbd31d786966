package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// EventRunNote records a note written into a run's history
// ([Scheduler.RunNote]); its Note field holds the text.
const EventRunNote = store.EventRunNote

// RunNote writes text (1 to [store.RunNoteTextMax] bytes) into the run's
// history as one [EventRunNote] event, so that the history shows why an
// operator acted on the run. It answers [ErrNotFound] for an unknown run
// and ErrUnsupported on a store without [store.RunNoteStore].
func (s *Scheduler) RunNote(ctx context.Context, runID, text string) error {
	ns, err := capability[store.RunNoteStore](s.store, "RunNoteStore")
	if err != nil {
		return err
	}
	p := &store.RunNoteParams{RunID: runID, Text: text}
	if err := p.Validate(); err != nil {
		return err
	}
	return ns.RunNote(ctx, p)
}
