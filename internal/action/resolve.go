package action

import (
	"context"

	"github.com/plaitdag/plait"
)

// resolve answers the items action would act on in target now.
func resolve(ctx context.Context, s *plait.Scheduler, action Action, target Target) ([]Item, bool, error) {
	return nil, false, invalid("not implemented")
}

func apply(ctx context.Context, s *plait.Scheduler, action Action, target Target, opts Options) (*Report, error) {
	return nil, invalid("not implemented")
}
