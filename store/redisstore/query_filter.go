package redisstore

import (
	"context"
	"strconv"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// querySource is what one shard reads for a filter: the index keys, the
// form of each ('z' a zset, 'x' a name stream), the keys per alternative
// in pick when they are alternatives of which run_list.lua and
// run_count.lua read the smallest, and the run-by-run checks they make
// (lua/lib_query.lua: status letters, workflow, service, tenant, creation
// bounds, error prefix).
type querySource struct {
	keys   []string
	kinds  string
	pick   string
	checks []any
}

// named appends a name index to src: both of its forms, the zset of
// format version 7 and the stream of format version 8 (lua/lib_names.lua),
// which the scripts read as two keys of one index. pick is set to the keys
// per alternative ("2") when the index is one of two alternatives.
func (src *querySource) named(k keys, sh int, zset string) {
	src.keys = append(src.keys, zset, k.nameStream(sh, zset))
	src.kinds += "zx"
}

// terminalStatuses are the statuses of the end indexes.
var terminalStatuses = []store.RunStatus{store.RunCompleted, store.RunFailed, store.RunCancelled}

// querySource chooses the index of a filter on shard sh: the end indexes
// of the statuses asked for a filter by end time; else the index of the
// tenant (with the service, or alone), the service or the workflow, read
// with the other when a workflow comes with a service or a tenant (the
// smaller of the two is read, each run's names checked); else the status
// indexes of the statuses asked, merged, or the index of all runs (when
// none, or pending runs, which have no index of their own, are asked).
// Whatever the index does not hold is checked run by run.
func (s *Store) querySource(sh int, f *store.RunFilter) querySource {
	var src querySource
	letters, pending := "", false
	for _, st := range f.Statuses {
		letters += letterOf(st)
		pending = pending || st == store.RunPending
	}
	var wf, svc, tenant, cfrom, cto string
	switch {
	case f.ByEnd():
		sts := f.Statuses
		if len(sts) == 0 {
			sts = terminalStatuses
		}
		src.keys = statusKeys(sts, func(l string) string { return s.keys.endIndex(sh, l) })
		letters, wf, svc, tenant = "", f.Workflow, f.Service, f.Tenant
		if !f.CreatedFrom.IsZero() {
			cfrom = strconv.FormatInt(f.CreatedFrom.UnixMilli(), 10)
		}
		if !f.CreatedTo.IsZero() {
			cto = strconv.FormatInt(f.CreatedTo.UnixMilli(), 10)
		}
	case f.Tenant != "" || f.Service != "":
		switch {
		case f.Tenant != "" && f.Service != "":
			src.named(s.keys, sh, s.keys.tenantIndex(sh, f.Service, f.Tenant))
		case f.Tenant != "":
			src.named(s.keys, sh, s.keys.tenantOnlyIndex(sh, f.Tenant))
		default:
			src.named(s.keys, sh, s.keys.serviceIndex(sh, f.Service))
		}
		if f.Workflow != "" {
			src.named(s.keys, sh, s.keys.workflowIndex(sh, f.Workflow))
			src.pick = "2"
			wf, svc, tenant = f.Workflow, f.Service, f.Tenant
		}
	case f.Workflow != "":
		src.named(s.keys, sh, s.keys.workflowIndex(sh, f.Workflow))
	case len(f.Statuses) == 0:
		src.keys = []string{s.keys.allIndex(sh)}
	case pending:
		src.keys = []string{s.keys.allIndex(sh)}
	default:
		src.keys = statusKeys(f.Statuses, func(l string) string { return s.keys.statusIndex(sh, l) })
		letters = ""
	}
	src.checks = []any{letters, wf, svc, tenant, cfrom, cto, f.ErrorPrefix}
	for len(src.kinds) < len(src.keys) {
		src.kinds += "z"
	}
	return src
}

// statusKeys returns key(letter) of each status, once each.
func statusKeys(sts []store.RunStatus, key func(letter string) string) []string {
	var keys []string
	seen := map[store.RunStatus]bool{}
	for _, st := range sts {
		if !seen[st] {
			seen[st] = true
			keys = append(keys, key(letterOf(st)))
		}
	}
	return keys
}

// scoreRange returns the max and min scores of a filter's index, as
// ZREVRANGEBYSCORE takes them: its end time range for a filter by end
// time, else its creation range. No score is below 0, where the running
// index keeps its skiplist pin (lua/common.lua).
func scoreRange(f *store.RunFilter) (max, min string) {
	from, to := f.CreatedFrom, f.CreatedTo
	if f.ByEnd() {
		from, to = f.EndedFrom, f.EndedTo
	}
	max, min = "+inf", "0"
	if !to.IsZero() {
		max = "(" + strconv.FormatInt(to.UnixMilli(), 10)
	}
	if !from.IsZero() {
		min = strconv.FormatInt(from.UnixMilli(), 10)
	}
	return max, min
}

// RunCount counts the runs of a filter per status. See
// [store.QueryStore.RunCount]. A filter the indexes count alone
// (store.RunFilter.CountIndexed) takes one ZCOUNT per shard and index
// read, in one pipeline: the index of all runs and the four status
// indexes for a creation range (pending = all less the others), or the
// end indexes of the statuses asked for an end range. Any other filter is
// counted by countByReading (query_count.go).
func (s *Store) RunCount(ctx context.Context, params *store.RunCountParams) (*store.RunCountResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := &params.Filter
	out := &store.RunCountResult{Counts: map[store.RunStatus]int64{}}
	max, min := scoreRange(f)
	if !f.CountIndexed() {
		return s.countByReading(ctx, f, params.ReadLimit())
	}
	if f.ByEnd() {
		sts := f.Statuses
		if len(sts) == 0 {
			sts = terminalStatuses
		}
		pipe := s.client.Pipeline()
		cmds := map[store.RunStatus][]*redis.IntCmd{}
		for _, st := range sts {
			if cmds[st] != nil {
				continue // asked twice
			}
			for sh := 0; sh < s.cfg.shards; sh++ {
				cmds[st] = append(cmds[st], pipe.ZCount(ctx, s.keys.endIndex(sh, letterOf(st)), min, max))
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, mapErr(err)
		}
		for st, cs := range cmds {
			for _, c := range cs {
				if n := c.Val(); n > 0 {
					out.Counts[st] += n
				}
			}
		}
		return out, nil
	}
	counts, err := s.countByCreation(ctx, min, max)
	if err != nil {
		return nil, err
	}
	for st, n := range counts {
		if len(f.Statuses) == 0 || containsStatus(f.Statuses, st) {
			out.Counts[st] = n
		}
	}
	return out, nil
}

func containsStatus(sts []store.RunStatus, st store.RunStatus) bool {
	for _, s := range sts {
		if s == st {
			return true
		}
	}
	return false
}

// countByCreation counts runs per status created in the score range with
// one ZCOUNT per shard and index (all runs, and running, completed,
// failed, cancelled), in one pipeline.
func (s *Store) countByCreation(ctx context.Context, min, max string) (map[store.RunStatus]int64, error) {
	pipe := s.client.Pipeline()
	type shardCounts struct {
		all  *redis.IntCmd
		each map[store.RunStatus]*redis.IntCmd
	}
	shards := make([]shardCounts, s.cfg.shards)
	for sh := range shards {
		shards[sh] = shardCounts{all: pipe.ZCount(ctx, s.keys.allIndex(sh), min, max), each: map[store.RunStatus]*redis.IntCmd{}}
		for _, st := range []store.RunStatus{store.RunRunning, store.RunCompleted, store.RunFailed, store.RunCancelled} {
			shards[sh].each[st] = pipe.ZCount(ctx, s.keys.statusIndex(sh, letterOf(st)), min, max)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, mapErr(err)
	}
	out := map[store.RunStatus]int64{}
	for _, sc := range shards {
		// A pending run is in the index of all runs and in no status
		// index; every other run is in both.
		pending := sc.all.Val()
		for st, c := range sc.each {
			if n := c.Val(); n > 0 {
				out[st] += n
				pending -= n
			}
		}
		if pending > 0 {
			out[store.RunPending] += pending
		}
	}
	return out, nil
}
