package action

import (
	"context"

	"github.com/plaitdag/plait"
)

// Count answers the dry run of action on target: how many items [Apply]
// would act on now, resolved the same way (the same reads, the same
// checks of each item's state).
func Count(ctx context.Context, s *plait.Scheduler, action Action, target Target) (CountResult, error) {
	items, capped, err := resolve(ctx, s, action, target)
	if err != nil {
		return CountResult{}, err
	}
	return CountResult{N: len(items), Capped: capped}, nil
}

// Apply does action on every item target resolves to, at opts.Rate items
// per second, and answers what it did item by item. It refuses (before
// acting on anything) an unknown action, a target of the wrong kind, a
// query without a reason, and a target of more than opts.Max items. Each
// run acted on gets the reason as a run note, and the call writes one
// audit record.
func Apply(ctx context.Context, s *plait.Scheduler, action Action, target Target, opts Options) (*Report, error) {
	return apply(ctx, s, action, target, opts)
}
