package store

import (
	"context"
	"fmt"
)

// RunNoteStore is the capability of writing a note into a run's history:
// one [EventRunNote] event in the run's event stream, so that the history
// shows why an operator acted on it (a cancel, a replay, a skipped task).
// The note is an event only: it changes no record, index or counter. Both
// shipped stores implement it: memstore, and redisstore in one script
// call (run_note).
type RunNoteStore interface {
	// RunNote appends one [EventRunNote] event, its text in
	// [StoreEvent].Note, to the event streams of the run. An unknown run
	// answers [ErrNotFound]. Sent again after a lost reply, it appends
	// the note again. One call reads one field of the run.
	RunNote(ctx context.Context, params *RunNoteParams) error
}

// EventRunNote is the type of the event of a note written into a run's
// history: [StoreEvent].Note holds the text and Generation the run's
// generation; RunStatus and Task are empty, so that a reader following a
// run's status never takes a note for a move.
const EventRunNote StoreEventType = "run_note"

// RunNoteTextMax is the longest [RunNoteParams].Text accepted, in bytes.
const RunNoteTextMax = 1024

// RunNoteParams are the arguments of [RunNoteStore.RunNote].
type RunNoteParams struct {
	RunID string
	// Text is the note, 1 to [RunNoteTextMax] bytes.
	Text string
}

// Validate reports why the note cannot be written: an empty run id, an
// empty text or one too long. Each problem wraps [ErrInvalidArgument].
func (p *RunNoteParams) Validate() error {
	switch {
	case p.RunID == "":
		return fmt.Errorf("%w: run note needs a run id", ErrInvalidArgument)
	case p.Text == "":
		return fmt.Errorf("%w: run note needs a text", ErrInvalidArgument)
	case len(p.Text) > RunNoteTextMax:
		return fmt.Errorf("%w: run note of %d bytes, want at most %d", ErrInvalidArgument, len(p.Text), RunNoteTextMax)
	}
	return nil
}
