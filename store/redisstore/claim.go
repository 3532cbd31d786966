package redisstore

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/plaitdag/plait"
)

// TaskClaim claims ready tasks. See [plait.Store.TaskClaim]. One script
// call per shard visited; with one shard, one round trip.
func (s *Store) TaskClaim(ctx context.Context, params *plait.TaskClaimParams) (*plait.TaskClaimResult, error) {
	queues, err := checkClaim(params)
	if err != nil {
		return nil, err
	}
	res := &plait.TaskClaimResult{}
	if err := s.claimShards(ctx, params, queues, res, nil, true); err != nil {
		return nil, err
	}
	return res, nil
}

// checkClaim validates claim arguments and returns the queues to claim from.
func checkClaim(params *plait.TaskClaimParams) ([]string, error) {
	if params.Limit < 1 || params.LeaseDuration <= 0 {
		return nil, fmt.Errorf("redisstore: claim needs a limit >= 1 and a positive lease: %w", plait.ErrInvalidArgument)
	}
	return checkQueues(params.Queues)
}

// claimShards claims on the shards not in skip, in rotating order, until
// params.Limit tasks are in res. first reports whether res.Now is still to
// be set. A failure after some tasks were claimed keeps them.
func (s *Store) claimShards(ctx context.Context, params *plait.TaskClaimParams, queues []string, res *plait.TaskClaimResult, skip map[int]bool, first bool) error {
	leaseMs := ceilDurMillis(params.LeaseDuration)
	for _, shard := range s.shardOrder() {
		left := params.Limit - len(res.Tasks)
		if left <= 0 {
			break
		}
		if skip[shard] {
			continue
		}
		keys := append([]string{s.keys.active(shard)}, s.queueKeys(shard, queues)...)
		v, err := s.runScript(ctx, scriptClaim, keys,
			s.nowArg(), s.keys.base(shard), params.WorkerID, left, leaseMs, len(queues), promoteBound)
		if err != nil {
			if len(res.Tasks) > 0 {
				break // keep what was claimed; the rest waits for the next claim
			}
			return err
		}
		if err := s.readClaim(&reply{v: v}, res, first); err != nil {
			return err
		}
		first = false
	}
	return nil
}

// readClaim reads the claim part of a script reply (see claim.lua) into
// res; first sets res.Now.
func (s *Store) readClaim(r *reply, res *plait.TaskClaimResult, first bool) error {
	now, next, n := r.int(), r.int(), r.int()
	if first {
		res.Now = msTime(now)
	}
	if next > 0 && (res.NextDueAt.IsZero() || msTime(next).Before(res.NextDueAt)) {
		res.NextDueAt = msTime(next)
	}
	for j := int64(0); j < n && r.err == nil; j++ {
		ct := &plait.ClaimedTask{}
		ct.Lease.RunID = r.str()
		ct.Lease.Task = r.str()
		ct.Lease.Epoch = r.int()
		ct.LeaseUntil = msTime(r.int())
		def, parents, payload := r.str(), r.str(), r.str()
		ct.Attempt = int(r.int())
		ct.FirstStartedAt = msTime(r.int())
		k := r.int()
		var bad error
		for p := int64(0); p < k && r.err == nil; p++ {
			name, result := r.str(), r.str()
			if ct.ParentResults == nil {
				ct.ParentResults = make(map[string][]byte, k)
			}
			b, err := decodeValue(result)
			if err != nil && bad == nil {
				bad = fmt.Errorf("parent %q result: %w", name, err)
			}
			ct.ParentResults[name] = b
		}
		if r.err != nil {
			break
		}
		spec, err := decodeTaskDef(ct.Lease.Task, def, parents, payload)
		if err == nil {
			err = bad
		}
		if err != nil {
			// The lease stays with this worker and the sweep reports it.
			s.cfg.logger.Error("redisstore: claimed task has a corrupt record",
				slog.String("run", ct.Lease.RunID), slog.String("task", ct.Lease.Task), slog.Any("err", err))
			continue
		}
		ct.Spec = spec
		res.Tasks = append(res.Tasks, ct)
	}
	return r.err
}
