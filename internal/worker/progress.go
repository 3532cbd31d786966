package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// Progress reports: a handler's Task.Progress keeps the attempt's latest
// report here, never calling the store itself. The lease keeper sends the
// reports made since its last round in one TaskProgress call per round
// (flushProgress, beside its extension), and the attempt's end sends a report still waiting
// before its outcome is written (endProgress): at most one write per
// attempt per round, however often the handler reports.

// progressSlot is the report of one attempt waiting to be sent.
type progressSlot struct {
	// sending is held while the slot's report is on its way to the
	// store, so a later report never lands before an earlier one: the
	// attempt's end waits for the keeper's call, and the keeper skips an
	// attempt whose end is sending.
	sending sync.Mutex
	mu      sync.Mutex
	pending bool
	value   float64
	note    string
	// ended is set once the last report was sent, or the store refused
	// the attempt's reports for good: later ones are dropped.
	ended bool
}

// progressState is the pool's side of progress reports.
type progressState struct {
	// off is set once the store was found without the capability (or a
	// wrapper answered ErrUnsupported), which is logged once.
	off    atomic.Bool
	logged sync.Once
}

// progressSendTimeout bounds one progress call, so the flush at an
// attempt's end cannot hold its outcome long.
const progressSendTimeout = 5 * time.Second

// Progress keeps value and note as the attempt's latest progress report,
// to be stored at the lease keeper's next round or at the attempt's end,
// whichever comes first; it never blocks on the store. It answers an error
// wrapping store.ErrInvalidArgument for a value that is not finite or a
// note longer than store.TaskProgressNoteMax bytes, and nil otherwise: on
// a store without progress reports the report is dropped (said once, at
// debug level), and so is one made after the attempt ended.
func (e *Attempt) Progress(value float64, note string) error {
	if err := store.CheckProgress(value, note); err != nil {
		return err
	}
	p := e.pool
	if p.progress.off.Load() {
		return nil
	}
	if _, ok := p.store.(store.ProgressStore); !ok {
		p.progressUnsupported()
		return nil
	}
	x := e.extras()
	if x == nil {
		return nil // the attempt ended
	}
	s := &x.progress
	s.mu.Lock()
	if !s.ended {
		s.pending, s.value, s.note = true, value, note
	}
	s.mu.Unlock()
	return nil
}

// progressUnsupported turns reports off for this Run and says so once.
func (p *pool) progressUnsupported() {
	p.progress.off.Store(true)
	p.progress.logged.Do(func() {
		p.cfg.Logger.Debug("plait: the store keeps no task progress; Task.Progress reports are dropped")
	})
}

// take hands over the waiting report, if any, and marks it sent.
func (s *progressSlot) take(final bool) (float64, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.pending && !s.ended
	s.pending = false
	if final {
		s.ended = true
	}
	return s.value, s.note, ok
}

// putBack keeps an unsent report waiting again, unless a later one took
// its place.
func (s *progressSlot) putBack(value float64, note string) {
	s.mu.Lock()
	if !s.pending && !s.ended {
		s.pending, s.value, s.note = true, value, note
	}
	s.mu.Unlock()
}

// end drops every later report.
func (s *progressSlot) end() {
	s.mu.Lock()
	s.ended, s.pending = true, false
	s.mu.Unlock()
}

// progressWaiting reports whether one of execs has a report to send, so
// a round without one starts no goroutine for them.
func (p *pool) progressWaiting(execs []*Attempt) bool {
	if p.progress.off.Load() {
		return false
	}
	for _, e := range execs {
		x := e.madeExtras()
		if x == nil {
			continue
		}
		s := &x.progress
		s.mu.Lock()
		waiting := s.pending
		s.mu.Unlock()
		if waiting {
			return true
		}
	}
	return false
}

// flushProgress sends the reports the attempts made since the last round,
// in one call per store.TaskProgressBatchMax of them. A call that failed
// keeps its reports for the next round, unless later ones took their
// place; a report refused for its lease ends the attempt's reports.
func (p *pool) flushProgress(ctx context.Context, execs []*Attempt) {
	if p.progress.off.Load() {
		return
	}
	ps, ok := p.store.(store.ProgressStore)
	if !ok {
		return
	}
	var batch []*Attempt
	var reps []store.ProgressReport
	send := func() {
		if len(batch) > 0 {
			p.sendProgress(ctx, ps, batch, reps)
		}
		batch, reps = batch[:0], reps[:0]
	}
	for _, e := range execs {
		x := e.madeExtras()
		if x == nil {
			continue
		}
		s := &x.progress
		if !s.sending.TryLock() {
			continue // its end is sending the latest report
		}
		v, n, ok := s.take(false)
		if !ok {
			s.sending.Unlock()
			continue
		}
		batch = append(batch, e)
		reps = append(reps, store.ProgressReport{Lease: e.ct.Lease, Value: v, Note: n})
		if len(batch) == store.TaskProgressBatchMax {
			send()
		}
	}
	send()
}

// sendProgress makes one TaskProgress call for the attempts of batch,
// whose sending locks the caller holds, and releases them.
func (p *pool) sendProgress(ctx context.Context, ps store.ProgressStore, batch []*Attempt, reps []store.ProgressReport) {
	defer func() {
		for _, e := range batch {
			e.madeExtras().progress.sending.Unlock()
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, progressSendTimeout)
	res, err := ps.TaskProgress(cctx, &store.TaskProgressParams{Reports: reps})
	cancel()
	if errors.Is(err, store.ErrUnsupported) {
		p.progressUnsupported()
		return
	}
	if err != nil || len(res) != len(batch) {
		p.cfg.Logger.Debug("plait: task progress not stored; sent again at the next round", "reports", len(reps), "err", err)
		for i, e := range batch {
			e.madeExtras().progress.putBack(reps[i].Value, reps[i].Note)
		}
		return
	}
	for i, r := range res {
		if r.Err != nil {
			// The lease no longer holds (or the task is gone): the
			// keeper's extension finds it too and stops the attempt.
			batch[i].madeExtras().progress.end()
		}
	}
}

// endProgress sends the attempt's report still waiting, before its
// outcome is written (after it the attempt's lease no longer holds), and
// drops every later one.
func (e *Attempt) endProgress(x *attemptExtras) {
	p := e.pool
	if p.progress.off.Load() {
		return
	}
	ps, ok := p.store.(store.ProgressStore)
	if !ok {
		return
	}
	s := &x.progress
	if cause := context.Cause(e.ctx); errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrRunCancelled) {
		s.end() // the store would refuse it
		return
	}
	s.sending.Lock()
	v, n, ok := s.take(true)
	if !ok {
		s.sending.Unlock()
		return
	}
	p.sendProgress(context.Background(), ps, []*Attempt{e}, []store.ProgressReport{{Lease: e.ct.Lease, Value: v, Note: n}})
}
