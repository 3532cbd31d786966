package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/plaitdag/plait/store"
)

// LeaseSweep recovers expired leases. See [store.Store.LeaseSweep]. One
// script call per shard visited.
func (s *Store) LeaseSweep(ctx context.Context, params *store.LeaseSweepParams) (*store.LeaseSweepResult, error) {
	if params.Limit < 1 || params.CrashLimit < 0 {
		return nil, fmt.Errorf("redisstore: sweep needs a limit >= 1 and a crash limit >= 0: %w", store.ErrInvalidArgument)
	}
	res := &store.LeaseSweepResult{}
	left := params.Limit
	order := s.shardOrder()
	for i, shard := range order {
		if left <= 0 {
			res.More = res.More || i < len(order)
			break
		}
		v, err := s.runScript(ctx, scriptLeaseSweep, []string{s.keys.active(shard)},
			s.stepArg(), s.keys.base(shard), s.retentionArg(), left, params.CrashLimit)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		more, n := r.int(), r.int()
		res.More = res.More || more == 1
		for j := int64(0); j < n && r.err == nil; j++ {
			kind, run, task, extra := r.str(), r.str(), r.str(), r.str()
			switch kind {
			case "q", "d":
				epoch, err := strconv.ParseInt(extra, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("redisstore: sweep reply epoch %q: %w", extra, err)
				}
				l := store.Lease{RunID: run, Task: task, Epoch: epoch}
				if kind == "q" {
					res.Requeued = append(res.Requeued, l)
				} else {
					res.Dead = append(res.Dead, l)
				}
				left--
			default:
				msg := fmt.Sprintf("run %s task %s: %s", run, task, extra)
				s.cfg.logger.Error("redisstore: sweep skipped a corrupt record", slog.String("record", msg))
				res.Corrupt = append(res.Corrupt, msg)
				left--
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return res, nil
}
