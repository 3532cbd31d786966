package store

import (
	"context"
	"fmt"
)

// RunDeleteManyStore is the capability of deleting many finished runs at
// once, as [QueryStore.RunDelete] deletes one: each run with everything it
// owns, each in one atomic step, in one round trip per shard (redisstore:
// one run_delete_many script call per hash slot group). It is how a
// tenant's runs are removed in bulk. Both shipped stores implement it.
type RunDeleteManyStore interface {
	// RunDeleteMany deletes the runs of params.IDs and answers one error
	// per id, in the order asked: nil for a run deleted, [ErrRunActive]
	// for one that has not finished (left as it is), [ErrNotFound] for an
	// unknown id (never created, expired, already deleted). The second
	// result is the error of the call as a whole (a store unreachable,
	// bad arguments); then no per-id answer is given, and some runs may
	// have been deleted (sending the call again is safe: a deleted run
	// answers ErrNotFound). One call reads at most [GetManyMax] runs.
	RunDeleteMany(ctx context.Context, params *RunDeleteManyParams) ([]error, error)
}

// RunDeleteManyParams are the arguments of [RunDeleteManyStore.RunDeleteMany].
type RunDeleteManyParams struct {
	// IDs are at most [GetManyMax] run ids.
	IDs []string
}

// Validate reports why the call cannot be made: more than [GetManyMax]
// ids. It wraps [ErrInvalidArgument]. An empty id is not refused here: it
// names no run and answers [ErrNotFound] in its place.
func (p *RunDeleteManyParams) Validate() error {
	if len(p.IDs) > GetManyMax {
		return fmt.Errorf("%w: %d ids, want at most %d", ErrInvalidArgument, len(p.IDs), GetManyMax)
	}
	return nil
}
