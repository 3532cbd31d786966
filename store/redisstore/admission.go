package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/store"
)

// Admission control ([store.AdmissionStore]). Each shard keeps its own caps
// (ac) and counts (an), because a create is one script on one shard's
// slot and can read no other: AdmissionSet writes a cap to every shard,
// each shard checks its creates against its own count, and a scope holds
// at most shards × cap pending tasks in all. lib_admission.lua holds the
// checks and the counting.
//
// Round trips: AdmissionSet 1 pipeline of one admission_set.lua call per
// shard; AdmissionGet 1 pipeline of two HGETs per shard. A create adds
// its shard's ac to the EXISTS of its run hashes it makes anyway; only
// when the shard has caps it pays more: an EXISTS, two HMGETs and, for a
// run counted, one HSET and an HINCRBY per capped scope. A step that ends
// tasks makes one EXISTS of an per call, and reads the run's field ad of
// each task that ends only when the shard counts tasks.

// createAdmission is run_create.lua's (and run_create_many.lua's per run)
// reply code for a run refused by a cap, whose field, cap, pending count
// and task count follow.
const createAdmission = 12

// admissionField is the field of a scope in the ac and an hashes.
func admissionField(sc store.AdmissionScope) string {
	if sc.Tenant != "" {
		return "t:" + sc.Tenant
	}
	return "q:" + sc.Queue
}

// admissionRefusal reads the value of a createAdmission reply:
// "<q:queue or t:tenant>:<cap>:<pending>:<tasks>".
func admissionRefusal(v string) error {
	parts := strings.Split(v, ":")
	if len(parts) != 5 {
		return fmt.Errorf("redisstore: admission reply %q", v)
	}
	var n [3]int64
	for i := range n {
		x, err := strconv.ParseInt(parts[2+i], 10, 64)
		if err != nil {
			return fmt.Errorf("redisstore: admission reply %q: %w", v, err)
		}
		n[i] = x
	}
	e := &store.AdmissionError{MaxPending: n[0], Pending: n[1], Tasks: n[2]}
	if parts[0] == "t" {
		e.Tenant = parts[1]
	} else {
		e.Queue = parts[1]
	}
	return e
}

// AdmissionSet writes the cap to every shard, in one pipeline. See
// [store.AdmissionStore].
func (s *Store) AdmissionSet(ctx context.Context, params *store.AdmissionSetParams) (*store.AdmissionSetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := admissionField(params.AdmissionScope)
	calls := make([]scriptCall, s.cfg.shards)
	for sh := range calls {
		calls[sh] = scriptCall{keys: []string{s.keys.admissionCaps(sh)}, args: []any{f, params.MaxPending}}
	}
	cmds, err := s.pipeline(ctx, scriptAdmissionSet, calls, false)
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil {
			return nil, scriptErr(cerr)
		}
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return &store.AdmissionSetResult{}, nil
}

// AdmissionGet reads the scope's cap and count on every shard, in one
// pipeline. See [store.AdmissionStore].
func (s *Store) AdmissionGet(ctx context.Context, params *store.AdmissionGetParams) (*store.AdmissionGetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := admissionField(params.AdmissionScope)
	caps := make([]*redis.StringCmd, s.cfg.shards)
	counts := make([]*redis.StringCmd, s.cfg.shards)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range caps {
			caps[sh] = p.HGet(ctx, s.keys.admissionCaps(sh), f)
			counts[sh] = p.HGet(ctx, s.keys.admissionCounts(sh), f)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, mapErr(err)
	}
	res := &store.AdmissionGetResult{}
	for sh := range caps {
		c, err := intOrZero(caps[sh])
		if err != nil {
			return nil, err
		}
		n, err := intOrZero(counts[sh])
		if err != nil {
			return nil, err
		}
		res.MaxPending = max(res.MaxPending, c)
		res.PendingShardMax = max(res.PendingShardMax, n)
		res.Pending += n
	}
	return res, nil
}

// intOrZero reads an integer reply, 0 for a missing field.
func intOrZero(c *redis.StringCmd) (int64, error) {
	v, err := c.Result()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redisstore: admission field %q: %w", v, err)
	}
	return n, nil
}

var _ store.AdmissionStore = (*Store)(nil)
