package memstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/plaitdag/plait/store"
)

// TaskProgress stores progress reports of running attempts, each with its
// event, under the lock. See [store.ProgressStore].
func (s *Store) TaskProgress(ctx context.Context, params *store.TaskProgressParams) ([]store.TaskProgressResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	out := make([]store.TaskProgressResult, len(params.Reports))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for i := range params.Reports {
		rep := &params.Reports[i]
		t, err := s.leasedLocked(rep.Lease)
		if err != nil {
			out[i].Err = err
			continue
		}
		t.progress = &store.TaskProgress{Value: rep.Value, Note: rep.Note, Attempt: t.inst.Attempt, Epoch: t.epoch, At: now}
		s.progressEventLocked(t, now)
	}
	return out, nil
}

// progressEventLocked records t's latest report as an event: its value in
// the record's duration slot (a progress event ends no attempt) and its
// note in the note slot, so the record keeps its size.
func (s *Store) progressEventLocked(t *task, now time.Time) {
	ev := taskEvent(t, now)
	ev.note, ev.dur, ev.kind = t.progress.Note, int64(math.Float64bits(t.progress.Value)), evProgress
	s.appendEventLocked(t.run, ev)
}

// progressOf is the report a progress event record carries.
func (e *evRec) progressOf() *store.TaskProgress {
	return &store.TaskProgress{Value: math.Float64frombits(uint64(e.dur)), Note: e.note,
		Attempt: int(e.attempt), Epoch: e.epoch, At: time.Unix(0, e.at).UTC()}
}

// attemptProgress is the report an attempt record of t's current claim
// keeps: t's latest, when its attempt made it.
func (t *task) attemptProgress() *store.TaskProgress {
	if t.progress != nil && t.progress.Epoch == t.epoch {
		return t.progress
	}
	return nil
}

// copyAttempts copies attempt records for a reader, each report its own.
func copyAttempts(a []store.Attempt) []store.Attempt {
	if len(a) == 0 {
		return nil
	}
	out := append([]store.Attempt(nil), a...)
	for i := range out {
		out[i].Progress = out[i].Progress.Clone()
	}
	return out
}

var _ store.ProgressStore = (*Store)(nil)
