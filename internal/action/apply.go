package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
	"unicode/utf8"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// check refuses options out of range, and a query or a note without a
// reason.
func (o *Options) check(a Action, t Target) error {
	switch {
	case math.IsNaN(o.Rate) || o.Rate < 0 || o.Rate > RateMax:
		return invalid("rate %v items per second, want 0 (the default, %d) to %d", o.Rate, RateDefault, RateMax)
	case o.Max < 0:
		return invalid("max %d is negative", o.Max)
	case len(o.Reason) > ReasonMax:
		return invalid("a reason of %d bytes, want at most %d", len(o.Reason), ReasonMax)
	case !utf8.ValidString(o.Reason) || !utf8.ValidString(o.Actor):
		return invalid("the reason and the actor must be UTF-8")
	case len(o.Actor) > 100:
		return invalid("an actor of %d bytes, want at most 100", len(o.Actor))
	case (t.IsQuery() || a == RunNote) && o.Reason == "":
		return ErrReasonRequired
	}
	return nil
}

// pacer spaces Apply's calls so that no more than rate items per second
// go out: the n items of a call are due at start + (items before)/rate.
type pacer struct {
	clk    plait.Clock
	rate   float64
	start  time.Time
	issued int
}

// wait blocks until n more items may go, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.issued == 0 {
		p.start = p.clk.Now()
	}
	due := p.start.Add(time.Duration(float64(p.issued) / p.rate * float64(time.Second)))
	p.issued += n
	d := due.Sub(p.clk.Now())
	if d <= 0 {
		return ctx.Err()
	}
	t := p.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// batchSize is how many items one call of a batched action takes: a tenth
// of a second's worth, so the pace stays smooth.
func batchSize(rate float64) int {
	return min(max(1, int(rate/10)), store.GetManyMax)
}

// run is one Apply call under way.
type run struct {
	s      *plait.Scheduler
	action Action
	target Target
	opts   Options
	pace   *pacer
	rep    *Report
	noted  map[string]bool
}

func apply(ctx context.Context, s *plait.Scheduler, action Action, t Target, opts Options) (rep *Report, err error) {
	if err := checkTarget(action, t); err != nil {
		return nil, err
	}
	if err := opts.check(action, t); err != nil {
		return nil, err
	}
	if opts.Rate == 0 {
		opts.Rate = RateDefault
	}
	if opts.Max == 0 {
		opts.Max = QueryMax
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	res, err := resolve(ctx, s, action, t)
	if err != nil {
		return nil, err
	}
	if res.capped || len(res.items) > opts.Max {
		return nil, &TooManyError{Count: CountResult{N: len(res.items), Capped: res.capped, Skipped: len(res.skipped)}, Max: opts.Max}
	}
	r := &run{
		s: s, action: action, target: t, opts: opts,
		pace:  &pacer{clk: opts.Clock, rate: opts.Rate},
		rep:   &Report{Action: action, Total: len(res.items), Items: make([]Item, 0, len(res.items)), Skipped: res.skipped},
		noted: map[string]bool{},
	}
	defer func() { r.audit(ctx, err) }()
	switch action {
	case RunDelete:
		err = r.deleteRuns(ctx, res.items)
	case DeadLetterPurge:
		err = r.purgeLetters(ctx, res.items)
	case DeadLetterRequeue:
		err = r.requeueLetters(ctx, res.items)
	default:
		for _, it := range res.items {
			if err = r.pace.wait(ctx, 1); err != nil {
				break
			}
			it.Runs, it.Err = r.one(ctx, it)
			if err = r.done(ctx, it); err != nil {
				break
			}
		}
	}
	return r.rep, err
}

// one acts on one item, answering the runs it created (a schedule's).
func (r *run) one(ctx context.Context, it Item) ([]string, error) {
	s, reason := r.s, r.opts.Reason
	var err error
	switch r.action {
	case RunCancel:
		_, err = s.RunCancel(ctx, it.ID)
	case RunReplay:
		gen := it.gen
		if r.target.Generation != nil {
			gen = *r.target.Generation
		}
		_, err = s.RunReplay(ctx, it.ID, gen, it.tasks...)
	case RunNote:
		err = s.RunNote(ctx, it.ID, r.noteText())
		if err == nil {
			r.noted[it.ID] = true
			r.rep.Noted++
		}
	case TaskRunNow:
		_, err = s.TaskRunNow(ctx, it.RunID, it.Task, reason)
	case TaskSkip:
		_, err = s.TaskSkip(ctx, it.RunID, it.Task, reason)
	case TaskCancel:
		_, err = s.TaskCancel(ctx, it.RunID, it.Task, reason)
	case QueuePause:
		err = s.QueuePause(ctx, it.ID)
	case QueueResume:
		err = s.QueueResume(ctx, it.ID)
	case NodeDrain:
		err = s.NodeDrain(ctx, it.ID)
	case SchedulePause:
		_, err = s.SchedulePause(ctx, it.ID)
	case ScheduleResume:
		_, err = s.ScheduleResume(ctx, it.ID)
	case ScheduleTrigger:
		var run *plait.Run
		if run, err = s.ScheduleTrigger(ctx, it.ID); err == nil {
			return []string{run.ID}, nil
		}
	case ScheduleBackfill:
		var runs []*plait.Run
		if runs, err = s.ScheduleBackfill(ctx, it.ID, r.target.From, r.target.To); err == nil {
			ids := make([]string, len(runs))
			for i, run := range runs {
				ids[i] = run.ID
			}
			return ids, nil
		}
	}
	return nil, err
}

// done records an item's outcome, notes its run and reports progress. It
// answers an error that ends the call: the context's end, or a store
// without the capability the action needs (every item would fail alike).
func (r *run) done(ctx context.Context, it Item) error {
	r.rep.Items = append(r.rep.Items, it)
	if it.Err != nil {
		r.rep.Failed++
	} else {
		r.rep.Done++
		r.note(ctx, it)
	}
	if r.opts.Progress != nil {
		r.opts.Progress(r.rep.Done+r.rep.Failed, r.rep.Total)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(it.Err, plait.ErrUnsupported) {
		return it.Err
	}
	return nil
}

// note writes the reason into the history of the run an item belongs to,
// once per run and call, where the store keeps notes. A deleted run has
// no history left; a note that fails is counted, not fatal: the action
// itself was done.
func (r *run) note(ctx context.Context, it Item) {
	kind := r.action.Kind()
	if r.action == RunDelete || r.action == RunNote || r.rep.NotesUnsupported ||
		(kind != KindRun && kind != KindTask && kind != KindDeadLetter) {
		return
	}
	id := it.ID
	if id == "" {
		id = it.RunID
	}
	if r.noted[id] {
		return
	}
	r.noted[id] = true
	err := r.s.RunNote(ctx, id, r.noteText())
	switch {
	case err == nil:
		r.rep.Noted++
	case errors.Is(err, plait.ErrUnsupported):
		r.rep.NotesUnsupported = true
	default:
		r.rep.NoteErrors++
	}
}

// noteText is the run note of the call: "run.cancel by alice: the
// reason".
func (r *run) noteText() string {
	text := string(r.action)
	if r.opts.Actor != "" {
		text += " by " + r.opts.Actor
	}
	if r.opts.Reason != "" {
		text += ": " + r.opts.Reason
	}
	return text // ReasonMax and the actor's bound keep it under store.RunNoteTextMax
}

// audit writes the call's one audit record.
func (r *run) audit(ctx context.Context, err error) {
	log := r.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	attrs := []slog.Attr{
		slog.String("actor", r.opts.Actor),
		slog.String("action", string(r.action)),
		slog.String("target", describe(r.target)),
		slog.Int("count", r.rep.Total),
		slog.Int("done", r.rep.Done),
		slog.Int("failed", r.rep.Failed),
		slog.Int("skipped", len(r.rep.Skipped)),
		slog.String("reason", r.opts.Reason),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	// An action its caller gave up on is audited all the same.
	log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, AuditMessage, attrs...)
}

// AuditMessage is the message of the audit record Apply writes.
const AuditMessage = "plait action"

// describe renders a target for the audit record: the ids or refs (the
// first 20, and how many), or the query as JSON.
func describe(t Target) string {
	const shown = 20
	switch {
	case t.Runs != nil:
		b, _ := json.Marshal(t.Runs)
		return "runs " + string(b)
	case t.DeadLetters != nil:
		b, _ := json.Marshal(t.DeadLetters)
		return "dead_letters " + string(b)
	case len(t.Refs) > 0:
		refs := t.Refs[:min(len(t.Refs), shown)]
		b, _ := json.Marshal(refs)
		return fmt.Sprintf("refs(%d) %s", len(t.Refs), b)
	}
	ids := t.IDs[:min(len(t.IDs), shown)]
	b, _ := json.Marshal(ids)
	s := fmt.Sprintf("ids(%d) %s", len(t.IDs), b)
	if !t.From.IsZero() {
		s += " from " + t.From.UTC().Format(time.RFC3339) + " to " + t.To.UTC().Format(time.RFC3339)
	}
	return s
}
