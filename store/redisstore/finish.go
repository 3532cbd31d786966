package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
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
// which are to be sent, with the stored form of each result: an outcome
// whose result is over the store's limit is answered ErrResultTooLarge
// here, so that it neither applies nor makes Redis refuse the whole batch.
func (s *Store) checkOutcomes(outcomes []store.TaskOutcome) ([]store.TaskFinishResult, []bool, []string) {
	out := make([]store.TaskFinishResult, len(outcomes))
	valid := make([]bool, len(outcomes))
	results := make([]string, len(outcomes))
	enc := s.values()
	for i, o := range outcomes {
		switch {
		case o.Outcome < store.OutcomeSucceeded || o.Outcome > store.OutcomeReturned:
			out[i].Err = fmt.Errorf("redisstore: unknown outcome %d: %w", o.Outcome, store.ErrInvalidArgument)
			continue
		case ids.Check(o.Lease.Task) != nil:
			out[i].Err = fmt.Errorf("redisstore: run %s has no task %s: %w", ids.Quote(o.Lease.RunID), ids.Quote(o.Lease.Task), store.ErrNotFound)
			continue
		}
		if o.Outcome == store.OutcomeSucceeded && len(o.Result) > 0 {
			// The limit is on the result as given, the same on every
			// store; its stored form is at most one flag byte longer.
			if len(o.Result) > s.cfg.maxResult {
				out[i].Err = s.tooLarge(o, len(o.Result))
				continue
			}
			results[i] = enc.encode(o.Result)
		}
		valid[i] = true
	}
	return out, valid, results
}

func (s *Store) tooLarge(o store.TaskOutcome, size int) error {
	return fmt.Errorf("redisstore: finish of run %s task %s: result of %d bytes, the limit is %d: %w",
		ids.Quote(o.Lease.RunID), ids.Quote(o.Lease.Task), size, s.cfg.maxResult, store.ErrResultTooLarge)
}

// finishBatches groups the valid outcomes by shard; outcomes whose run id
// this store cannot have issued are answered ErrNotFound.
func (s *Store) finishBatches(outcomes []store.TaskOutcome, out []store.TaskFinishResult, valid []bool) []shardBatch {
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
// one shard's batch (see task_finish.lua).
func (s *Store) outcomeArgs(b shardBatch, outcomes []store.TaskOutcome, results []string, keys []string, args []any) ([]string, []any) {
	for _, i := range b.idx {
		o := &outcomes[i]
		keys = append(keys, s.keys.run(b.shard, o.Lease.RunID))
		var delay int64
		if o.Outcome == store.OutcomeRetry {
			delay = ceilDurMillis(o.RetryDelay)
		}
		var outcome any = int(o.Outcome)
		if o.TimedOut && (o.Outcome == store.OutcomeRetry || o.Outcome == store.OutcomeFailed) {
			// The record says timed out; the task moves as the outcome says.
			outcome = strconv.Itoa(int(o.Outcome)) + "t"
		}
		args = append(args, o.Lease.RunID, o.Lease.Task, o.Lease.Epoch, outcome, results[i], o.Error, delay)
	}
	return keys, args
}

// readFinish reads the finish part of a script reply into out.
func readFinish(r *reply, b shardBatch, outcomes []store.TaskOutcome, out []store.TaskFinishResult) error {
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

// TaskFinish applies outcomes. See [store.Store.TaskFinish]. One script
// call per shard touched by the batch.
func (s *Store) TaskFinish(ctx context.Context, params *store.TaskFinishParams) ([]store.TaskFinishResult, error) {
	out, valid, results := s.checkOutcomes(params.Outcomes)
	for _, b := range s.finishBatches(params.Outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		if err := s.finishShard(ctx, b, params.Outcomes, results, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finishShard applies one shard's outcomes with task_finish.lua.
func (s *Store) finishShard(ctx context.Context, b shardBatch, outcomes []store.TaskOutcome, results []string, out []store.TaskFinishResult) error {
	keys, args := s.outcomeArgs(b, outcomes, results,
		[]string{s.keys.active(b.shard)},
		[]any{s.stepArg(), s.keys.base(b.shard), s.retentionArg(), len(b.idx)})
	v, err := s.runScript(ctx, scriptTaskFinish, keys, args...)
	if err != nil {
		return err
	}
	return readFinish(&reply{v: v}, b, outcomes, out)
}

// memoTTL is how long the memory of a finish-only TaskFinishClaim with a
// request id is kept when it gives no lease duration.
const memoTTL = time.Minute

// TaskFinishClaim finishes, then claims. See [store.Store.TaskFinishClaim].
// One script call (task_finish_claim.lua) per shard touched by the
// outcomes, each finishing that shard's outcomes and claiming what is still
// wanted there (where the released children are); then, while the limit is
// not met, claims on the other shards. With one shard: one round trip. When
// Redis refuses task_finish_claim.lua for memory, the outcomes are applied
// with task_finish.lua, which Redis runs, and nothing is claimed.
func (s *Store) TaskFinishClaim(ctx context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	cp := &params.Claim
	claim := cp.Limit > 0
	var queues []string
	if claim {
		var err error
		if queues, err = checkClaim(cp); err != nil {
			return nil, err
		}
	} else if err := checkRequestID(cp.RequestID); err != nil {
		return nil, err
	}
	outcomes := params.Finish.Outcomes
	out, valid, results := s.checkOutcomes(outcomes)
	res := &store.TaskFinishClaimResult{Finished: out}
	if claim {
		res.Claimed = &store.TaskClaimResult{}
	}
	leaseMs := ceilDurMillis(cp.LeaseDuration)
	if leaseMs <= 0 {
		leaseMs = memoTTL.Milliseconds()
	}
	first := true
	full := false
	taken := 0
	done := map[int]bool{}
	for _, b := range s.finishBatches(outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		if full {
			if err := s.finishShard(ctx, b, outcomes, results, out); err != nil {
				return nil, err
			}
			continue
		}
		limit := 0
		if claim {
			limit = cp.Limit - taken
		}
		keys := []string{s.keys.active(b.shard)}
		nq := 0
		if limit > 0 {
			keys = append(keys, s.queueKeys(b.shard, queues)...)
			nq = len(queues)
		}
		keys, args := s.outcomeArgs(b, outcomes, results, keys,
			[]any{s.claimStepArg(cp), s.keys.base(b.shard), s.retentionArg(), cp.WorkerID, limit, leaseMs, nq, promoteBound, len(b.idx), handlersArg(cp.Handlers), sharesArg(cp.Shares)})
		if cp.RequestID != "" {
			keys = append(keys, s.keys.claimMemo(b.shard, cp.RequestID))
		}
		v, err := s.runScript(ctx, scriptTaskFinishClaim, keys, args...)
		if errors.Is(err, store.ErrStoreFull) {
			full = true
			if err := s.finishShard(ctx, b, outcomes, results, out); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		if err := readFinish(r, b, outcomes, out); err != nil {
			return nil, err
		}
		if limit > 0 {
			n, err := s.readClaim(r, res.Claimed, first)
			if err != nil {
				return nil, err
			}
			taken += n
			first = false
			done[b.shard] = true
		}
		readParentsLeft(r, res)
	}
	if claim && !full && taken < cp.Limit {
		if _, err := s.claimShards(ctx, cp, queues, res.Claimed, done, first, taken); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// readParentsLeft reads the value task_finish_claim.lua puts last when a
// finish left a join waiting, and keeps the fewest over the shards.
func readParentsLeft(r *reply, res *store.TaskFinishClaimResult) {
	if r.i >= len(r.v) {
		return
	}
	if left := int(r.int()); left > 0 && (res.ParentsLeft == 0 || left < res.ParentsLeft) {
		res.ParentsLeft = left
	}
}
