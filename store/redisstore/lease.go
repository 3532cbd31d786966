package redisstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// LeaseExtend extends held leases. See [store.Store.LeaseExtend]. One script
// call per shard touched by the batch.
func (s *Store) LeaseExtend(ctx context.Context, params *store.LeaseExtendParams) ([]store.LeaseExtendResult, error) {
	if params.Duration <= 0 {
		return nil, fmt.Errorf("redisstore: lease extend needs a positive duration: %w", store.ErrInvalidArgument)
	}
	out := make([]store.LeaseExtendResult, len(params.Leases))
	valid := make([]bool, len(params.Leases))
	for i, l := range params.Leases {
		if ids.Check(l.Task) != nil {
			out[i].Err = fmt.Errorf("redisstore: run %s has no task %s: %w", ids.Quote(l.RunID), ids.Quote(l.Task), store.ErrNotFound)
			continue
		}
		valid[i] = true
	}
	batches := s.groupByShard(len(params.Leases),
		func(i int) string { return params.Leases[i].RunID },
		func(i int, err error) {
			if valid[i] {
				out[i].Err = err
			}
		})
	durMs := ceilDurMillis(params.Duration)
	for _, b := range batches {
		keys := []string{s.keys.active(b.shard)}
		args := []any{s.nowArg(), durMs, 0}
		var sent []int
		for _, i := range b.idx {
			if !valid[i] {
				continue
			}
			l := params.Leases[i]
			sent = append(sent, i)
			keys = append(keys, s.keys.run(b.shard, l.RunID))
			args = append(args, l.RunID, l.Task, l.Epoch)
		}
		if len(sent) == 0 {
			continue
		}
		args[2] = len(sent)
		v, err := s.runScript(ctx, scriptLeaseExtend, keys, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		until := msTime(r.int())
		for _, i := range sent {
			code := r.int()
			if r.err != nil {
				return nil, r.err
			}
			if err := codeErr(code); err != nil {
				out[i].Err = fmt.Errorf("redisstore: extend %s/%s: %w", params.Leases[i].RunID, params.Leases[i].Task, err)
				continue
			}
			out[i].Until = until
		}
	}
	return out, nil
}
