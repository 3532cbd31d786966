package redisstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// RunDeleteMany deletes finished runs with one run_delete_many.lua call per
// shard that holds some of them: one round trip per shard. See
// [store.RunDeleteManyStore]. An id this store cannot have issued answers
// ErrNotFound without a call.
func (s *Store) RunDeleteMany(ctx context.Context, params *store.RunDeleteManyParams) ([]error, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	out := make([]error, len(params.IDs))
	byShard := map[int][]int{}
	var order []int
	for i, id := range params.IDs {
		sh, ok := shardOf(id, s.cfg.shards)
		if !ok {
			out[i] = fmt.Errorf("redisstore: delete run %s: %w", ids.Quote(id), store.ErrNotFound)
			continue
		}
		if _, seen := byShard[sh]; !seen {
			order = append(order, sh)
		}
		byShard[sh] = append(byShard[sh], i)
	}
	for _, sh := range order {
		idx := byShard[sh]
		keys := make([]string, len(idx))
		args := make([]any, 0, 2+len(idx))
		args = append(args, s.stepArg(), s.keys.base(sh))
		for j, i := range idx {
			keys[j] = s.keys.run(sh, params.IDs[i])
			args = append(args, params.IDs[i])
		}
		v, err := s.runScript(ctx, scriptRunDeleteMany, keys, args...)
		if err != nil {
			return nil, err
		}
		if len(v) != len(idx) {
			return nil, fmt.Errorf("redisstore: run_delete_many answered %d codes for %d runs", len(v), len(idx))
		}
		r := &reply{v: v}
		for _, i := range idx {
			code := r.int()
			if r.err != nil {
				return nil, r.err
			}
			if err := codeErr(code); err != nil {
				out[i] = fmt.Errorf("redisstore: delete run %s: %w", ids.Quote(params.IDs[i]), err)
			}
		}
	}
	return out, nil
}
