package action

import (
	"context"

	"github.com/plaitdag/plait"
)

// Count answers the dry run of action on target: how many items [Apply]
// would act on now, resolved the same way (the same reads, the same
// checks of each item's state). A query reads RunList or DeadLetterList
// pages until the last, at most [QueryMax] items kept (Capped past
// that); a selection reads its runs by RunGetMany, GetManyMax at a time,
// and its nodes and schedules one by one.
func Count(ctx context.Context, s *plait.Scheduler, action Action, target Target) (CountResult, error) {
	res, err := resolve(ctx, s, action, target)
	if err != nil {
		return CountResult{}, err
	}
	return CountResult{N: len(res.items), Capped: res.capped, Skipped: len(res.skipped)}, nil
}

// Apply does action on every item target resolves to, at opts.Rate items
// per second, and answers what it did item by item. It refuses, before
// acting on anything, an unknown action, a target of the wrong form, a
// query without a reason (ErrReasonRequired), options out of range, and a
// target of more than opts.Max items (a *TooManyError). An item that
// fails is reported and the call goes on; the context's end, or a store
// without the capability the action needs, stops it (the report says
// what was done until then, with the error). Each run acted on gets one
// run note, "<action> by <actor>: <reason>", where the store keeps
// notes; the call writes one audit record, an slog record at Info
// ([AuditMessage]) to opts.Logger with the actor, action, target, count,
// done, failed, skipped and reason.
func Apply(ctx context.Context, s *plait.Scheduler, action Action, target Target, opts Options) (*Report, error) {
	return apply(ctx, s, action, target, opts)
}

// Check refuses, without reading the store, an unknown action or a target
// of a form the action does not take (what Count and Apply refuse first),
// so that a caller may authorize the target's items before anything is
// read.
func Check(action Action, target Target) error { return checkTarget(action, target) }
