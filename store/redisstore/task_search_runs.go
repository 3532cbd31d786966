package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// runs examines the runs of the shard's run index newest first, after the
// cursor's run and, in that run, after the cursor's task: the index of the
// service and tenant, or of the service, when the filter names them, else
// the index of all runs; each run costs one of the budget.
func (sr *searcher) runs(ctx context.Context, shard int, from *store.TaskSearchPosition) error {
	k := sr.s.keys
	index := k.allIndex(shard)
	switch {
	case sr.p.Service != "" && sr.p.Tenant != "":
		index = k.tenantIndex(shard, sr.p.Service, sr.p.Tenant)
	case sr.p.Service != "":
		index = k.serviceIndex(shard, sr.p.Service)
	}
	maxScore, cid, skip := "+inf", "", ""
	var ids []string
	var scores []int64
	if from != nil {
		run, task, _ := strings.Cut(from.Member, " ")
		maxScore, cid, skip = strconv.FormatInt(from.Score, 10), run, task
		ids, scores = append(ids, run), append(scores, from.Score)
	}
	// run_list's arguments: no time range, want and budget both the
	// budget, no index to pick, and none of its run-by-run checks (the
	// seven after the pick): the hits are filtered here, task by task.
	want := sr.budget
	keys, kinds := []string{index}, "z"
	if index != k.allIndex(shard) {
		// a name index, in both of its forms (query_filter.go)
		keys, kinds = append(keys, k.nameStream(shard, index)), "zx"
	}
	v, err := sr.s.pipeScripts(ctx, scriptRunList, []scriptCall{{keys: keys,
		args: []any{k.base(shard), maxScore, cid, "0", want, want, "", "", "", "", "", "", "", "", kinds}}})
	if err != nil {
		return err
	}
	var found []position
	if err := readIndexPages(v[0], func(entries []position, _ *position) { found = append(found, entries...) }); err != nil {
		return err
	}
	// each key answered its newest entries; merged, the newest of all
	slices.SortFunc(found, comparePositions)
	for _, p := range found {
		ids, scores = append(ids, p.id), append(scores, p.score)
	}
	if len(ids) > sr.budget {
		ids = ids[:sr.budget]
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	if _, err := sr.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, k.run(shard, id))
		}
		return nil
	}); err != nil {
		return err
	}
	for i, id := range ids {
		sr.budget--
		h := cmds[i].Val()
		run, err := decodeRun(id, h)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		past := i > 0 || skip == ""
		pos := store.TaskSearchPosition{Section: store.TaskSearchRuns, Shard: shard, Score: scores[i]}
		for ti := range run.Tasks {
			in := &run.Tasks[ti]
			pos.Member = id + " " + in.Name
			sr.last = pos
			if !past {
				past = in.Name == skip
				continue
			}
			if store.TaskSearchSection(in.Status) != store.TaskSearchRuns {
				continue
			}
			hit, err := hitOf(run, in, h)
			if err != nil {
				return err
			}
			if !sr.p.Matches(&hit) {
				continue
			}
			sr.res.Tasks = append(sr.res.Tasks, hit)
			if len(sr.res.Tasks) == sr.p.Limit {
				sr.full = true
				return nil
			}
		}
		if sr.budget <= 0 {
			return nil
		}
	}
	return nil
}
