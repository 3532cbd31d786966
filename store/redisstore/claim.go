package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// TaskClaim claims ready tasks. See [store.Store.TaskClaim]. One script
// call per shard visited; with one shard, one round trip.
func (s *Store) TaskClaim(ctx context.Context, params *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	queues, err := checkClaim(params)
	if err != nil {
		return nil, err
	}
	res := &store.TaskClaimResult{}
	if _, err := s.claimShards(ctx, params, queues, res, nil, true, 0); err != nil {
		return nil, err
	}
	return res, nil
}

// maxRequestID bounds TaskClaimParams.RequestID, which goes into a key.
const maxRequestID = 64

// checkClaim validates claim arguments and returns the queues to claim from.
func checkClaim(params *store.TaskClaimParams) ([]string, error) {
	if params.Limit < 1 || params.LeaseDuration <= 0 {
		return nil, fmt.Errorf("redisstore: claim needs a limit >= 1 and a positive lease: %w", store.ErrInvalidArgument)
	}
	if err := checkRequestID(params.RequestID); err != nil {
		return nil, err
	}
	if err := checkShares(params.Shares); err != nil {
		return nil, err
	}
	for _, h := range params.Handlers {
		if err := ids.Check(h); err != nil {
			return nil, fmt.Errorf("redisstore: handler %s %v: %w", ids.Quote(h), err, store.ErrInvalidArgument)
		}
	}
	return checkQueues(params.Queues)
}

// handlersArg encodes TaskClaimParams.Handlers for the claim scripts: "*"
// for nil (any handler), else the names space separated (no name holds a
// space or a '*').
func handlersArg(handlers []string) string {
	if handlers == nil {
		return "*"
	}
	return strings.Join(handlers, " ")
}

func checkRequestID(rid string) error {
	if rid == "" {
		return nil
	}
	if len(rid) > maxRequestID || ids.Check(rid) != nil {
		return fmt.Errorf("redisstore: request id %s: want 1..%d bytes of [A-Za-z0-9._-]: %w", ids.Quote(rid), maxRequestID, store.ErrInvalidArgument)
	}
	return nil
}

// claimOrder is the order a claim visits the shards in: rotating, or, for a
// claim with a request id, starting at the shard its id hashes to, so that
// the same claim sent again visits them in the same order and finds the
// memory of each shard the first one claimed on.
func (s *Store) claimOrder(rid string) []int {
	if rid == "" || s.cfg.shards == 1 {
		return s.shardOrder()
	}
	n := s.cfg.shards
	start := int(keyHash(rid) % uint32(n))
	out := make([]int, n)
	for i := range out {
		out[i] = (start + i) % n
	}
	return out
}

// claimShards claims on the shards not in skip, in claimOrder, until
// params.Limit tasks are taken; taken counts those taken before, and the
// new count is returned. A replayed claim counts what the first call took
// (see task_claim.lua), so a claim sent again visits the shards the first one
// did. first reports whether res.Now is still to be set. A failure after
// some tasks were claimed keeps them.
func (s *Store) claimShards(ctx context.Context, params *store.TaskClaimParams, queues []string, res *store.TaskClaimResult, skip map[int]bool, first bool, taken int) (int, error) {
	leaseMs := ceilDurMillis(params.LeaseDuration)
	order := s.claimOrder(params.RequestID)
	for i, shard := range order {
		left := params.Limit - taken
		if left <= 0 {
			break
		}
		if skip[shard] {
			continue
		}
		keys := append([]string{s.keys.active(shard)}, s.queueKeys(shard, queues)...)
		more := 0
		if params.RequestID != "" {
			keys = append(keys, s.keys.claimMemo(shard, params.RequestID))
			for _, later := range order[i+1:] {
				if !skip[later] {
					more = 1
				}
			}
		}
		v, err := s.runScript(ctx, scriptTaskClaim, keys,
			s.claimStepArg(params), s.keys.base(shard), params.WorkerID, left, leaseMs, len(queues), promoteBound, more, handlersArg(params.Handlers), sharesArg(params.Shares))
		if err != nil {
			if len(res.Tasks) > 0 {
				break // keep what was claimed; the rest waits for the next claim
			}
			return taken, err
		}
		n, err := s.readClaim(&reply{v: v}, res, first)
		if err != nil {
			return taken, err
		}
		taken += n
		first = false
	}
	return taken, nil
}

// readClaim reads the claim part of a script reply (see task_claim.lua) into
// res and returns how many tasks the claim took (a replay took more than
// it answers when some have moved on since); first sets res.Now.
func (s *Store) readClaim(r *reply, res *store.TaskClaimResult, first bool) (int, error) {
	now, next, n, taken := r.int(), r.int(), r.int(), r.int()
	if first {
		res.Now = msTime(now)
	}
	if next > 0 && (res.NextDueAt.IsZero() || msTime(next).Before(res.NextDueAt)) {
		res.NextDueAt = msTime(next)
	}
	var infos []claimRunInfo // sent once per run and reply
	for j := int64(0); j < n && r.err == nil; j++ {
		ct := &store.ClaimedTask{}
		ct.Lease.RunID = r.str()
		ct.Lease.Task = r.str()
		ct.Lease.Epoch = r.int()
		ct.LeaseUntil = msTime(r.int())
		def, parents, payload := r.str(), r.str(), r.str()
		ct.Attempt = int(r.int())
		ct.FirstStartedAt = msTime(r.int())
		rawInfo := r.str()
		k := r.int()
		if k < 0 {
			// the claim left the parents' results out (InlineResultsMax)
			ct.ParentResultsDeferred = true
			k = 0
		}
		var bad error
		if r.err == nil {
			info, err := s.claimInfo(&infos, ct.Lease.RunID, rawInfo)
			if err != nil {
				bad = fmt.Errorf("run info: %w", err)
			} else {
				ct.Workflow, ct.Tenant, ct.Service, ct.Metadata = info.Workflow, info.Tenant, info.Service, info.Metadata
			}
		}
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
		spec, err := decodeTaskDef(ct.Lease.Task, def, parents, payload, ct.ParentResultsDeferred)
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
	return int(taken), r.err
}

// claimRunInfo is the run info of one run of a claim reply.
type claimRunInfo struct {
	run  string
	info *runInfo
}

// claimInfo returns the run info of a claimed task: decoded from raw, or,
// when raw is empty, the one an earlier task of the same run in this reply
// carried (the script leaves it out for a task of the same run as the one
// before it), or nothing when there is none. Tasks of one run share it,
// their Metadata map included. A reply holds at most a batch of tasks, so
// a scan finds the earlier one sooner than a map is built.
func (s *Store) claimInfo(infos *[]claimRunInfo, runID, raw string) (*runInfo, error) {
	if raw == "" {
		for i := len(*infos) - 1; i >= 0; i-- {
			if (*infos)[i].run == runID {
				return (*infos)[i].info, nil
			}
		}
		return &runInfo{}, nil // a hash without field i: nothing to tell
	}
	in, err := decodeRunInfo(raw)
	if err != nil {
		return nil, err
	}
	*infos = append(*infos, claimRunInfo{run: runID, info: &in})
	return &in, nil
}

// checkShares validates TaskClaimParams.Shares: nil, or four counts of
// at least zero.
func checkShares(shares []int) error {
	if shares == nil {
		return nil
	}
	ok := len(shares) == 4
	for _, v := range shares {
		ok = ok && v >= 0
	}
	if !ok {
		return fmt.Errorf("redisstore: shares %v: want four counts of at least 0: %w", shares, store.ErrInvalidArgument)
	}
	return nil
}

// sharesArg encodes TaskClaimParams.Shares for the claim scripts:
// "<urgent>,<high>,<normal>,<low>", or "" for strict priority. On a claim
// that visits several shards, each shard gets the whole shares: a level
// may take more than its share across shards, never less.
func sharesArg(shares []int) string {
	if len(shares) != 4 {
		return ""
	}
	return strconv.Itoa(shares[0]) + "," + strconv.Itoa(shares[1]) + "," + strconv.Itoa(shares[2]) + "," + strconv.Itoa(shares[3])
}

// ClaimsByShares declares that claims honour TaskClaimParams.Shares; see
// [store.FairClaimer].
func (s *Store) ClaimsByShares() {}

var _ store.FairClaimer = (*Store)(nil)

// RoutesClaims declares that the store routes claims; see
// [store.ClaimRouter]. Routed queues are queues like any other here; the
// tasks a claim sets aside for want of their handler are kept as
// lib_claim.lua describes.
func (s *Store) RoutesClaims() {}

var _ store.ClaimRouter = (*Store)(nil)
