package redisstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Fleet-wide limits (see [store.Limiter] and lua/lib_limit.lua). A task's
// limits are written at create into the run hash field l:<task>, which the
// claim reads with the task's other fields and the status move out of
// running reads when the attempt ends. The state of a key lives under the
// shard's hash tag, so a store keeps limits only with one shard: with
// more, two runs holding the same key would live in different slots and no
// script could count them together.

// KeepsLimits declares that the store keeps task limits; see
// [store.Limiter]. A store with more than one shard refuses to create a
// run with limits (ErrInvalidArgument).
func (s *Store) KeepsLimits() {}

var _ store.Limiter = (*Store)(nil)

// encodeLimits encodes field l:<task>: "key,concurrency,rate,perMs" per
// limit, ';' separated (keys are ids: no ',' or ';').
func encodeLimits(ls []store.TaskLimit) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(l.Key)
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(l.Concurrency))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(l.Rate))
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(ceilDurMillis(l.Per), 10))
	}
	return b.String()
}

// checkLimits validates the limits of a workflow for this store.
func (s *Store) checkLimits(wf *store.WorkflowSpec) error {
	for _, t := range wf.Tasks {
		if len(t.Limits) == 0 {
			continue
		}
		if s.cfg.shards > 1 {
			return fmt.Errorf("redisstore: task %q has limits, which a store with %d shards cannot keep (they need WithShards(1)): %w", t.Name, s.cfg.shards, store.ErrInvalidArgument)
		}
		for _, l := range t.Limits {
			if ids.Check(l.Key) != nil || l.Concurrency < 0 || l.Rate < 0 || (l.Rate > 0 && l.Per <= 0) || (l.Concurrency == 0 && l.Rate == 0) {
				return fmt.Errorf("redisstore: task %q limit %s: %w", t.Name, ids.Quote(l.Key), store.ErrInvalidArgument)
			}
		}
	}
	return nil
}

// limitHolders is the set of running tasks holding a concurrency slot of
// key; lib_limit.lua builds it (and the keys below) from the shard base.
func (k keys) limitHolders(s int, key string) string { return k.base(s) + "l:" + key }

// limitStarts is the rate window of key: starts by time (zset, ms).
func (k keys) limitStarts(s int, key string) string { return k.base(s) + "lr:" + key }

// limitWaiting lists the ready tasks held back on key.
func (k keys) limitWaiting(s int, key string) string { return k.base(s) + "lw:" + key }

// limitWakes orders the keys with tasks held back by a rate by the time
// the window lets one more start (zset, ms).
func (k keys) limitWakes(s int) string { return k.base(s) + "ld" }
