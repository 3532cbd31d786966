package redisstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// TaskSearch answers one page of tasks across runs from the structures the
// transitions keep; see [store.TaskSearchStore] for the sections, their
// order and the budget. Per shard and section it reads:
//
//	running    the lease zset active: ZRANK and ZSCORE of the cursor's
//	           entry, then ZRANGE by rank after it (ZRANGEBYSCORE from the
//	           cursor's deadline when the entry has left or moved)
//	ready      the registry qn (SMEMBERS), then per queue LRANGE of the
//	           four ready lists, through SMEMBERS g:<queue> the set-aside
//	           lists, and the list of the queue's own limit
//	           lw:queue.<queue>, each from its head (in the cursor's
//	           list, LPOS of its entry, MAXLEN the index it was read at
//	           and the budget, then LRANGE after it)
//	retrying   per queue of the registry, the delayed zset z:<queue>, as
//	           running
//	dead       the dead-letter index dl, as running
//	runs       run_list.lua on the run index (iu:<service>:<tenant>,
//	           is:<service> or ia), newest first, then HGETALL of each run
//
// Each entry of the first four is checked with one pipelined HMGET of its
// run (m, i, s:<task>, d:<task>): gone, moved to another section or not
// matching, it is skipped; each hit is read whole (HGETALL of its run).
func (s *Store) TaskSearch(ctx context.Context, params *store.TaskSearchParams) (*store.TaskSearchResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	var cur store.TaskSearchPosition
	if params.Cursor != "" {
		cur, _ = store.ParseTaskSearchCursor(params.Cursor)
	}
	sr := &searcher{s: s, p: params, budget: store.TaskSearchScan + params.Limit, res: &store.TaskSearchResult{}}
	for sec := max(cur.Section, store.TaskSearchRunning); sec <= store.TaskSearchRuns; sec++ {
		if !params.WantsSection(sec) {
			continue
		}
		first := 0
		if sec == cur.Section {
			first = cur.Shard
		}
		for sh := first; sh < s.cfg.shards; sh++ {
			var from *store.TaskSearchPosition
			if sec == cur.Section && sh == cur.Shard {
				from = &cur
			}
			var err error
			switch sec {
			case store.TaskSearchRunning:
				err = sr.zset(ctx, sec, sh, "", s.keys.active(sh), from)
			case store.TaskSearchReady:
				err = sr.ready(ctx, sh, from)
			case store.TaskSearchRetrying:
				err = sr.retrying(ctx, sh, from)
			case store.TaskSearchDead:
				err = sr.zset(ctx, sec, sh, "", s.keys.deadIndex(sh), from)
			case store.TaskSearchRuns:
				err = sr.runs(ctx, sh, from)
			}
			if err != nil {
				return nil, err
			}
			if sr.stopped() {
				sr.res.NextCursor = sr.last.Cursor()
				return sr.res, nil
			}
		}
	}
	return sr.res, nil
}

// searcher is one TaskSearch call under way.
type searcher struct {
	s      *Store
	p      *store.TaskSearchParams
	budget int // entries left to examine
	res    *store.TaskSearchResult
	// last is the position of the last hit, or of the last entry examined
	// once the budget ran out: the next page starts after it.
	last store.TaskSearchPosition
	full bool
}

func (sr *searcher) stopped() bool { return sr.full || sr.budget <= 0 }

// cand is an entry of a section's structure, in the section's order.
type cand struct {
	pos   store.TaskSearchPosition
	run   string
	task  string
	score int64 // the lease deadline in the running section
}

// check examines cands in order, as the budget allows: one pipelined HMGET
// each, then HGETALL of the runs of the hits.
func (sr *searcher) check(ctx context.Context, shard int, cs []cand) error {
	if len(cs) > sr.budget {
		cs = cs[:sr.budget]
	}
	if len(cs) == 0 {
		return nil
	}
	k := sr.s.keys
	cmds := make([]*redis.SliceCmd, len(cs))
	if _, err := sr.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cs {
			cmds[i] = p.HMGet(ctx, k.run(shard, c.run), "m", "i", "s:"+c.task, "d:"+c.task)
		}
		return nil
	}); err != nil {
		return err
	}
	var hits []cand
	for i, c := range cs {
		sr.budget--
		sr.last = c.pos
		v := cmds[i].Val()
		m, _ := v[0].(string)
		is, _ := v[1].(string)
		ss, _ := v[2].(string)
		ds, _ := v[3].(string)
		if m == "" || ss == "" || ds == "" {
			continue // the run is gone
		}
		info, err1 := decodeRunInfo(is)
		st, err2 := decodeState(ss)
		def, err3 := decodeDef(c.task, ds, true)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		if store.TaskSearchSection(st.status) != c.pos.Section {
			continue // it moved on: found in its section, if at all
		}
		h := store.TaskHit{Tenant: info.Tenant, Service: info.Service, Queue: def.spec.Queue}
		h.Status, h.Handler = st.status, def.spec.Handler
		_, h.Node = store.SplitWorker(st.worker)
		if !sr.p.Matches(&h) {
			continue
		}
		hits = append(hits, c)
		if len(sr.res.Tasks)+len(hits) == sr.p.Limit {
			sr.full = true
			break
		}
	}
	return sr.add(ctx, shard, hits)
}

// add reads each hit's run whole and appends the hits as RunGet has them.
func (sr *searcher) add(ctx context.Context, shard int, hits []cand) error {
	runs := map[string]*redis.MapStringStringCmd{}
	if _, err := sr.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range hits {
			if runs[c.run] == nil {
				runs[c.run] = p.HGetAll(ctx, sr.s.keys.run(shard, c.run))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, c := range hits {
		h := runs[c.run].Val()
		r, err := decodeRun(c.run, h)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		in := r.Task(c.task)
		if in == nil {
			continue
		}
		hit, err := hitOf(r, in, h)
		if err != nil {
			return err
		}
		if hit.Status == store.TaskRunning && c.pos.Section == store.TaskSearchRunning {
			hit.LeaseUntil = msTime(c.score)
		}
		sr.res.Tasks = append(sr.res.Tasks, hit)
	}
	return nil
}

// hitOf builds the hit of task in of run r, whose hash is h.
func hitOf(r *store.Run, in *store.TaskInstance, h map[string]string) (store.TaskHit, error) {
	def, err := decodeDef(in.Name, h["d:"+in.Name], true)
	if err != nil {
		return store.TaskHit{}, err
	}
	return store.TaskHit{RunID: r.ID, Workflow: r.Workflow, Tenant: r.Tenant, Service: r.Service,
		Queue: def.spec.Queue, Priority: def.spec.Priority, TaskInstance: *in}, nil
}

// zset examines the entries of zset key after from (by score, then
// member), in the section sec and queue given.
func (sr *searcher) zset(ctx context.Context, sec, shard int, queue, key string, from *store.TaskSearchPosition) error {
	n := int64(sr.budget)
	c := sr.s.client
	var zs []redis.Z
	var err error
	switch {
	case from == nil || from.Queue != queue:
		zs, err = c.ZRangeWithScores(ctx, key, 0, n-1).Result()
	default:
		var rank *redis.IntCmd
		var score *redis.FloatCmd
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			rank = p.ZRank(ctx, key, from.Member)
			score = p.ZScore(ctx, key, from.Member)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if rank.Err() == nil && score.Err() == nil && int64(score.Val()) == from.Score {
			zs, err = c.ZRangeWithScores(ctx, key, rank.Val()+1, rank.Val()+n).Result()
			break
		}
		// The cursor's entry left (or its score moved): read from its
		// score and drop what sorts before it. Should every entry read
		// share its score and sort before it, go past that score.
		min := strconv.FormatInt(from.Score, 10)
		zs, err = c.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: min, Max: "+inf", Count: n}).Result()
		if err == nil {
			zs = slices.DeleteFunc(zs, func(z redis.Z) bool {
				m, _ := z.Member.(string)
				return int64(z.Score) == from.Score && m <= from.Member
			})
			if len(zs) == 0 {
				zs, err = c.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: "(" + min, Max: "+inf", Count: n}).Result()
			}
		}
	}
	if err != nil {
		return err
	}
	cs := make([]cand, 0, len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		run, task, ok := strings.Cut(m, " ")
		if !ok {
			continue // the skiplist pin
		}
		sc := int64(z.Score)
		cs = append(cs, cand{pos: store.TaskSearchPosition{Section: sec, Shard: shard, Queue: queue, Score: sc, Member: m}, run: run, task: task, score: sc})
	}
	return sr.check(ctx, shard, cs)
}

// queues answers the registry's queues of shard, sorted, those of the
// Queue filter only, from after's name on.
func (sr *searcher) queues(ctx context.Context, shard int, after string) ([]string, error) {
	names, err := sr.s.client.SMembers(ctx, sr.s.keys.queueNames(shard)).Result()
	if err != nil {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool {
		q, _, _ := store.SplitRoutedQueue(n)
		return n < after || (sr.p.Queue != "" && q != sr.p.Queue)
	})
	sort.Strings(names)
	return names, nil
}

// retrying examines the delayed zsets of the registry's queues.
func (sr *searcher) retrying(ctx context.Context, shard int, from *store.TaskSearchPosition) error {
	after := ""
	if from != nil {
		after = from.Queue
	}
	names, err := sr.queues(ctx, shard, after)
	if err != nil {
		return err
	}
	for _, q := range names {
		if err := sr.zset(ctx, store.TaskSearchRetrying, shard, q, sr.s.keys.delayed(shard, q), from); err != nil || sr.stopped() {
			return err
		}
	}
	return nil
}

// ready examines the ready and set-aside lists of the registry's queues,
// each from its head; in the cursor's list, from after the cursor's entry
// when it is still there.
func (sr *searcher) ready(ctx context.Context, shard int, from *store.TaskSearchPosition) error {
	after := ""
	if from != nil {
		after = from.Queue
	}
	names, err := sr.queues(ctx, shard, after)
	if err != nil {
		return err
	}
	k, c := sr.s.keys, sr.s.client
	for _, q := range names {
		handlers, err := c.SMembers(ctx, k.asideIndex(shard, q)).Result()
		if err != nil {
			return err
		}
		lists := []string{"3", "2", "1", "0"}
		for _, h := range handlers {
			lists = append(lists, "g"+h)
		}
		if !strings.Contains(q, "+") {
			lists = append(lists, "l")
		}
		slices.SortFunc(lists, store.TaskSearchListRank)
		for _, l := range lists {
			resume := from != nil && from.Queue == q
			if resume && store.TaskSearchListRank(l, from.List) < 0 {
				continue
			}
			resume = resume && l == from.List
			var key string
			switch {
			case l == "l":
				key = k.limitWaiting(shard, store.QueueLimitKey(q))
			case len(l) == 1:
				p, _ := strconv.Atoi(l)
				key = k.ready(shard, q, p)
			default:
				key = k.aside(shard, q, l[1:])
			}
			// From the head, or from after the cursor's entry: LPOS finds
			// it, scanning no further than the index it was read at and
			// the budget (entries leave a list at its head, so it can only
			// have come nearer, but for tasks given back to the head).
			start := int64(0)
			if resume {
				i, err := c.LPos(ctx, key, from.Member, redis.LPosArgs{MaxLen: from.Score + int64(sr.budget)}).Result()
				if err != nil && !errors.Is(err, redis.Nil) {
					return err
				}
				if err == nil {
					start = i + 1
				}
			}
			es, err := c.LRange(ctx, key, start, start+int64(sr.budget)-1).Result()
			if err != nil {
				return err
			}
			cs := make([]cand, 0, len(es))
			for i, e := range es {
				if run, task, ok := strings.Cut(e, " "); ok {
					cs = append(cs, cand{pos: store.TaskSearchPosition{Section: store.TaskSearchReady, Shard: shard, Queue: q, List: l, Score: start + int64(i), Member: e}, run: run, task: task})
				}
			}
			if err := sr.check(ctx, shard, cs); err != nil || sr.stopped() {
				return err
			}
		}
	}
	return nil
}

var _ store.TaskSearchStore = (*Store)(nil)
