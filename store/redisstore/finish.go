package redisstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/ids"
)

// byShard groups the indexes of a batch by the shard of their run.
type shardBatch struct {
	shard int
	idx   []int
}

func (s *Store) groupByShard(n int, runID func(i int) string, bad func(i int, err error)) []shardBatch {
	var out []shardBatch
	pos := map[int]int{}
	for i := 0; i < n; i++ {
		shard, err := s.runShard(runID(i))
		if err != nil {
			bad(i, err)
			continue
		}
		j, ok := pos[shard]
		if !ok {
			j = len(out)
			pos[shard] = j
			out = append(out, shardBatch{shard: shard})
		}
		out[j].idx = append(out[j].idx, i)
	}
	return out
}

// checkOutcomes answers the outcomes no script needs to see and reports
// which are to be sent.
func checkOutcomes(outcomes []plait.TaskOutcome) ([]plait.TaskFinishResult, []bool) {
	out := make([]plait.TaskFinishResult, len(outcomes))
	valid := make([]bool, len(outcomes))
	for i, o := range outcomes {
		switch {
		case o.Outcome < plait.OutcomeSucceeded || o.Outcome > plait.OutcomeReturned:
			out[i].Err = fmt.Errorf("redisstore: unknown outcome %d: %w", o.Outcome, plait.ErrInvalidArgument)
		case ids.Check(o.Lease.Task) != nil:
			out[i].Err = fmt.Errorf("redisstore: run %q has no task %q: %w", o.Lease.RunID, o.Lease.Task, plait.ErrNotFound)
		default:
			valid[i] = true
		}
	}
	return out, valid
}

// finishBatches groups the valid outcomes by shard; outcomes whose run id
// this store cannot have issued are answered ErrNotFound.
func (s *Store) finishBatches(outcomes []plait.TaskOutcome, out []plait.TaskFinishResult, valid []bool) []shardBatch {
	batches := s.groupByShard(len(outcomes),
		func(i int) string { return outcomes[i].Lease.RunID },
		func(i int, err error) {
			if valid[i] {
				out[i].Err = err
			}
		})
	for j := range batches {
		idx := batches[j].idx[:0]
		for _, i := range batches[j].idx {
			if valid[i] {
				idx = append(idx, i)
			}
		}
		batches[j].idx = idx
	}
	return batches
}

// outcomeArgs appends the run hash keys and the 7 arguments per outcome of
// one shard's batch (see finish.lua).
func (s *Store) outcomeArgs(b shardBatch, outcomes []plait.TaskOutcome, keys []string, args []any) ([]string, []any) {
	enc := s.values()
	for _, i := range b.idx {
		o := &outcomes[i]
		keys = append(keys, s.keys.run(b.shard, o.Lease.RunID))
		var delay int64
		if o.Outcome == plait.OutcomeRetry {
			delay = ceilDurMillis(o.RetryDelay)
		}
		result := ""
		if o.Outcome == plait.OutcomeSucceeded && len(o.Result) > 0 {
			result = enc.encode(o.Result)
		}
		args = append(args, o.Lease.RunID, o.Lease.Task, o.Lease.Epoch, int(o.Outcome), result, o.Error, delay)
	}
	return keys, args
}

// readFinish reads the finish part of a script reply into out.
func readFinish(r *reply, b shardBatch, outcomes []plait.TaskOutcome, out []plait.TaskFinishResult) error {
	for _, i := range b.idx {
		code, st := r.int(), r.str()
		if r.err != nil {
			return r.err
		}
		if err := codeErr(code); err != nil {
			out[i].Err = fmt.Errorf("redisstore: finish %s/%s: %w", outcomes[i].Lease.RunID, outcomes[i].Lease.Task, err)
		}
		if st != "" {
			out[i].RunStatus, _ = runStatusOf(st[:1])
		}
	}
	return nil
}

// TaskFinish applies outcomes. See [plait.Store.TaskFinish]. One script
// call per shard touched by the batch.
func (s *Store) TaskFinish(ctx context.Context, params *plait.TaskFinishParams) ([]plait.TaskFinishResult, error) {
	out, valid := checkOutcomes(params.Outcomes)
	for _, b := range s.finishBatches(params.Outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		keys, args := s.outcomeArgs(b, params.Outcomes,
			[]string{s.keys.active(b.shard)},
			[]any{s.nowArg(), s.keys.base(b.shard), s.retentionMs(), len(b.idx)})
		v, err := s.runScript(ctx, scriptFinish, keys, args...)
		if err != nil {
			return nil, err
		}
		if err := readFinish(&reply{v: v}, b, params.Outcomes, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TaskFinishClaim finishes, then claims. See [plait.Store.TaskFinishClaim].
// One script call (finish_claim.lua) per shard touched by the outcomes,
// each finishing that shard's outcomes and claiming what is still wanted
// there (where the released children are); then, while the limit is not
// met, claims on the other shards. With one shard: one round trip.
func (s *Store) TaskFinishClaim(ctx context.Context, params *plait.TaskFinishClaimParams) (*plait.TaskFinishClaimResult, error) {
	cp := &params.Claim
	claim := cp.Limit > 0
	var queues []string
	if claim {
		var err error
		if queues, err = checkClaim(cp); err != nil {
			return nil, err
		}
	}
	outcomes := params.Finish.Outcomes
	out, valid := checkOutcomes(outcomes)
	res := &plait.TaskFinishClaimResult{Finished: out}
	if claim {
		res.Claimed = &plait.TaskClaimResult{}
	}
	leaseMs := ceilDurMillis(cp.LeaseDuration)
	first := true
	done := map[int]bool{}
	for _, b := range s.finishBatches(outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		limit := 0
		if claim {
			limit = cp.Limit - len(res.Claimed.Tasks)
		}
		keys := []string{s.keys.active(b.shard)}
		nq := 0
		if limit > 0 {
			keys = append(keys, s.queueKeys(b.shard, queues)...)
			nq = len(queues)
		}
		keys, args := s.outcomeArgs(b, outcomes, keys,
			[]any{s.nowArg(), s.keys.base(b.shard), s.retentionMs(), cp.WorkerID, limit, leaseMs, nq, promoteBound, len(b.idx)})
		v, err := s.runScript(ctx, scriptFinishClaim, keys, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		if err := readFinish(r, b, outcomes, out); err != nil {
			return nil, err
		}
		if limit > 0 {
			if err := s.readClaim(r, res.Claimed, first); err != nil {
				return nil, err
			}
			first = false
			done[b.shard] = true
		}
	}
	if claim && len(res.Claimed.Tasks) < cp.Limit {
		if err := s.claimShards(ctx, cp, queues, res.Claimed, done, first); err != nil {
			return nil, err
		}
	}
	return res, nil
}
