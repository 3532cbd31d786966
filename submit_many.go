package plait

import (
	"context"
	"errors"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// Submission is one workflow of [Scheduler.SubmitMany] with its submit
// options.
type Submission struct {
	Workflow *Workflow
	Options  []SubmitOption
}

// SubmitMany submits several workflows at once, in order, in as few store
// calls as the store allows (on Redis, one round trip per 256 runs instead
// of one per run). Every submission is validated first: if any is invalid,
// SubmitMany returns the joined errors, each naming its index, and writes
// nothing. Otherwise runs[i] is the run of subs[i] (the existing one for a
// taken run key), or nil when the store could not create it; err then joins
// those failures, each naming its index. A store failure of the call as a
// whole returns no runs, and some may have been created: run keys make a
// retry safe.
func (s *Scheduler) SubmitMany(ctx context.Context, subs []Submission) (runs []*Run, err error) {
	if s.runMetrics() == nil {
		return s.submitMany(ctx, subs, nil)
	}
	start := s.cfg.clock.Now()
	var (
		params []*store.RunCreateParams
		out    []store.RunCreateOutcome
	)
	runs, err = s.submitMany(ctx, subs, func(p []*store.RunCreateParams, o []store.RunCreateOutcome) { params, out = p, o })
	batchErr := err
	if out == nil {
		// Refused or failed as a whole: every submission failed with err.
		params = make([]*store.RunCreateParams, len(subs))
	} else {
		batchErr = nil
	}
	labels := make([]RunLabels, len(subs))
	for i, sub := range subs {
		labels[i] = submitLabels(sub.Workflow, sub.Options)
	}
	s.submittedMany(params, labels, out, batchErr, start)
	return runs, err
}

// submitMany is SubmitMany; seen, when not nil, is given the creates and
// the store's outcomes once the store answered them all.
func (s *Scheduler) submitMany(ctx context.Context, subs []Submission, seen func([]*store.RunCreateParams, []store.RunCreateOutcome)) (runs []*Run, err error) {
	params := make([]*store.RunCreateParams, len(subs))
	var errs []error
	for i, sub := range subs {
		p, err := s.createParams(sub.Workflow, sub.Options)
		if err != nil {
			errs = append(errs, fmt.Errorf("plait: submission %d: %w", i, err))
			continue
		}
		params[i] = p
	}
	checked, err := s.checkHandlers(ctx, params)
	if err != nil {
		return nil, err
	}
	for i, e := range checked {
		if e != nil {
			errs = append(errs, fmt.Errorf("plait: submission %d: %w", i, e))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out, err := s.store.RunCreateMany(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(out) != len(params) {
		return nil, fmt.Errorf("plait: store answered %d of %d submissions", len(out), len(params))
	}
	if seen != nil {
		seen(params, out)
	}
	runs = make([]*Run, len(out))
	for i, o := range out {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("plait: submission %d: %w", i, o.Err))
			continue
		}
		runs[i] = o.Result.Run
		if !o.Result.Existing {
			s.emit(Event{Type: EventRunSubmitted, RunID: o.Result.Run.ID, RunStatus: o.Result.Run.Status})
		}
	}
	return runs, errors.Join(errs...)
}
