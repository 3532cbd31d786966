package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// RunNote appends a note to the run's history with run_note.lua. See
// [store.RunNoteStore]. One round trip.
func (s *Store) RunNote(ctx context.Context, params *store.RunNoteParams) error {
	if err := params.Validate(); err != nil {
		return err
	}
	shard, err := s.runShard(params.RunID)
	if err != nil {
		return err
	}
	v, err := s.runScript(ctx, scriptRunNote, []string{s.keys.run(shard, params.RunID)},
		s.stepArg(), s.keys.base(shard), params.RunID, params.Text)
	if err != nil {
		return err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return r.err
	}
	if err := codeErr(code); err != nil {
		return fmt.Errorf("redisstore: note on run %s: %w", ids.Quote(params.RunID), err)
	}
	return nil
}

// decodeNoteEvent decodes the body of a run_note event, after its '#':
// "<generation>;<text>", the generation empty for 0 (lua/run_note.lua).
func decodeNoteEvent(ev *store.StoreEvent, v string) error {
	g, text, ok := strings.Cut(v, ";")
	if !ok {
		return corrupt("note event %s is malformed", clip(v))
	}
	if g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n < 0 {
			return corrupt("note event %s: generation", clip(v))
		}
		ev.Generation = n
	}
	ev.Type, ev.Note = store.EventRunNote, text
	return nil
}
