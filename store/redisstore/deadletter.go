package redisstore

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// deadChunk is how many index entries one step of DeadLetterList reads
// from a shard before it filters them.
const deadChunk = 256

// deadCandidate is one letter found in an index or a run's list, before
// its run's fields are read.
type deadCandidate struct {
	shard int
	id    string
	task  string
	atMs  int64 // -1: from a run's list, the time comes from the task's state
}

// DeadLetterList answers one page of dead letters, newest first. See
// [store.DeadLetterStore]. Across every run it reads each shard's index
// dl newest first, in chunks of deadChunk entries, and the run fields of
// each chunk in one pipeline, until the page is full, the index is done or
// it has read Limit + 1 + [store.DeadLetterReadMax] entries of the shard:
// 2 round trips per chunk and shard, and with a cursor one more for all
// shards (where each shard's read starts). A page a filter left short
// carries the cursor of where the shards' reads stopped. For one run it
// reads the run's list x:<run> and its fields: 2 round trips.
func (s *Store) DeadLetterList(ctx context.Context, params *store.DeadLetterListParams) (*store.DeadLetterListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return s.deadLetters(ctx, params)
}

// DeadLetterGroups groups the window of letters a DeadLetterList of the
// same filters would list in a page of params.Window, read the same way
// (Window + 1 + [store.DeadLetterReadMax] index entries per shard at
// most). See [store.DeadLetterGroupStore].
func (s *Store) DeadLetterGroups(ctx context.Context, params *store.DeadLetterGroupsParams) (*store.DeadLetterGroupsResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	lp := params.ListParams()
	page, err := s.deadLetters(ctx, &lp)
	if err != nil {
		return nil, err
	}
	return store.GroupDeadLetters(page.Letters, page.NextCursor), nil
}

// deadLetters answers the page of params, its limit unchecked.
func (s *Store) deadLetters(ctx context.Context, params *store.DeadLetterListParams) (*store.DeadLetterListResult, error) {
	// Letters are stamped on whole milliseconds; the bounds are read cut
	// down to the millisecond, as the index range below reads them.
	bounds := *params
	if !params.Since.IsZero() {
		bounds.Since = msTime(params.Since.UnixMilli())
	}
	if !params.Until.IsZero() {
		bounds.Until = msTime(params.Until.UnixMilli())
	}
	var curMs int64
	var curKey string
	if params.Cursor != "" {
		curMs, curKey, _ = store.ParseDeadLetterCursor(params.Cursor)
	}
	after := func(l *store.DeadLetter) bool {
		return params.Cursor == "" || store.DeadLetterBefore(curMs, curKey, l.At.UnixMilli(), l.RunID+" "+l.Task)
	}
	var found []store.DeadLetter
	// stop is the position where the first shard whose read the bound
	// cut stopped: letters past it are not known on that shard.
	var stop *deadPos
	if params.RunID != "" {
		shard, err := s.runShard(params.RunID)
		if err != nil {
			return nil, err
		}
		names, err := s.client.LRange(ctx, s.keys.deadLetters(shard, params.RunID), 0, -1).Result()
		if err != nil {
			return nil, mapErr(err)
		}
		cands := make([]deadCandidate, len(names))
		for i, n := range names {
			cands[i] = deadCandidate{shard: shard, id: params.RunID, task: n, atMs: -1}
		}
		letters, err := s.readDeadLetters(ctx, cands)
		if err != nil {
			return nil, err
		}
		for i := range letters {
			if bounds.Matches(&letters[i]) && after(&letters[i]) {
				found = append(found, letters[i])
			}
		}
	} else {
		var err error
		if found, stop, err = s.deadIndexRead(ctx, params, &bounds); err != nil {
			return nil, err
		}
	}
	sort.Slice(found, func(i, j int) bool {
		return store.DeadLetterBefore(found[i].At.UnixMilli(), found[i].RunID+" "+found[i].Task,
			found[j].At.UnixMilli(), found[j].RunID+" "+found[j].Task)
	})
	if stop != nil {
		// Only the letters at or before the stop are known on every shard.
		n := sort.Search(len(found), func(i int) bool {
			return store.DeadLetterBefore(stop.ms, stop.key, found[i].At.UnixMilli(), found[i].RunID+" "+found[i].Task)
		})
		found = found[:n]
	}
	res := &store.DeadLetterListResult{Letters: found}
	switch {
	case len(found) > params.Limit:
		res.Letters = found[:params.Limit]
		res.NextCursor = store.DeadLetterCursor(res.Letters[len(res.Letters)-1])
	case stop != nil:
		res.NextCursor = store.DeadLetterCursorAt(stop.ms, stop.key)
	}
	if res.Letters == nil {
		res.Letters = []store.DeadLetter{}
	}
	return res, nil
}

// deadPos is a position in DeadLetterList's order: a time in ms and a
// "<run> <task>" key.
type deadPos struct {
	ms  int64
	key string
}

// deadIndexRead reads the letters matching params from every shard's index
// dl, from the cursor on, newest first: per shard until it found Limit + 1,
// or read Limit + 1 + store.DeadLetterReadMax entries, or the index is
// done. It answers the letters found and, when a shard stopped at the read
// bound before its index was done, the newest position such a shard
// stopped at.
func (s *Store) deadIndexRead(ctx context.Context, params, bounds *store.DeadLetterListParams) ([]store.DeadLetter, *deadPos, error) {
	max, min := "+inf", "-inf"
	if !params.Until.IsZero() {
		max = "(" + strconv.FormatInt(params.Until.UnixMilli(), 10)
	}
	var curMs int64
	var curKey string
	atCursor := false
	if params.Cursor != "" {
		curMs, curKey, _ = store.ParseDeadLetterCursor(params.Cursor)
		if params.Until.IsZero() || curMs < params.Until.UnixMilli() {
			max = strconv.FormatInt(curMs, 10)
			atCursor = true
		}
	}
	if !params.Since.IsZero() {
		min = strconv.FormatInt(params.Since.UnixMilli(), 10)
	}
	skips := make([]int64, s.cfg.shards)
	if atCursor {
		var err error
		if skips, err = s.deadSkips(ctx, curMs, curKey); err != nil {
			return nil, nil, err
		}
	}
	budget := int64(params.Limit) + 1 + store.DeadLetterReadMax
	var found []store.DeadLetter
	var stop *deadPos
	for shard := 0; shard < s.cfg.shards; shard++ {
		matched := 0
		for read := int64(0); ; {
			count := min64(deadChunk, budget-read)
			zs, err := s.client.ZRevRangeByScoreWithScores(ctx, s.keys.deadIndex(shard), &redis.ZRangeBy{
				Max: max, Min: min, Offset: skips[shard] + read, Count: count}).Result()
			if err != nil {
				return nil, nil, mapErr(err)
			}
			read += int64(len(zs))
			var cands []deadCandidate
			for _, z := range zs {
				member, _ := z.Member.(string)
				id, task, ok := strings.Cut(member, " ")
				if !ok || (params.Task != "" && task != params.Task) {
					continue
				}
				cands = append(cands, deadCandidate{shard: shard, id: id, task: task, atMs: int64(z.Score)})
			}
			letters, err := s.readDeadLetters(ctx, cands)
			if err != nil {
				return nil, nil, err
			}
			for i := range letters {
				// the cursor test guards against an index that moved
				// between the skips and this read
				if bounds.Matches(&letters[i]) && (!atCursor || store.DeadLetterBefore(curMs, curKey, letters[i].At.UnixMilli(), letters[i].RunID+" "+letters[i].Task)) {
					found = append(found, letters[i])
					matched++
				}
			}
			if int64(len(zs)) < count || matched > params.Limit {
				break
			}
			if read >= budget {
				last := zs[len(zs)-1]
				member, _ := last.Member.(string)
				p := deadPos{ms: int64(last.Score), key: member}
				if stop == nil || store.DeadLetterBefore(p.ms, p.key, stop.ms, stop.key) {
					stop = &p
				}
				break
			}
		}
	}
	return found, stop, nil
}

// deadSkips answers, per shard, how many entries of the cursor's
// millisecond come at or before the cursor in DeadLetterList's order
// (members of one score are in descending byte order in a reverse range):
// those a read from the cursor's millisecond skips. When the cursor's
// letter is still in the index its rank says it (one pipeline for every
// shard: its score, its reverse rank and the count of newer entries);
// else a binary search over the millisecond's entries, one round trip a
// step, which only a purged letter's cursor meets.
func (s *Store) deadSkips(ctx context.Context, curMs int64, curKey string) ([]int64, error) {
	n := s.cfg.shards
	scores := make([]*redis.FloatCmd, n)
	ranks := make([]*redis.IntCmd, n)
	newer := make([]*redis.IntCmd, n)
	same := make([]*redis.IntCmd, n)
	ms := strconv.FormatInt(curMs, 10)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := 0; sh < n; sh++ {
			k := s.keys.deadIndex(sh)
			scores[sh] = p.ZScore(ctx, k, curKey)
			ranks[sh] = p.ZRevRank(ctx, k, curKey)
			newer[sh] = p.ZCount(ctx, k, "("+ms, "+inf")
			same[sh] = p.ZCount(ctx, k, ms, ms)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	skips := make([]int64, n)
	for sh := 0; sh < n; sh++ {
		if sc, err := scores[sh].Result(); err == nil && int64(sc) == curMs {
			skips[sh] = ranks[sh].Val() - newer[sh].Val() + 1
			continue
		}
		// the first entry of the millisecond that comes after the cursor
		lo, hi := int64(0), same[sh].Val()
		for lo < hi {
			mid := (lo + hi) / 2
			zs, err := s.client.ZRevRangeByScore(ctx, s.keys.deadIndex(sh), &redis.ZRangeBy{Max: ms, Min: ms, Offset: mid, Count: 1}).Result()
			if err != nil {
				return nil, mapErr(err)
			}
			if len(zs) == 0 {
				hi = mid
				break
			}
			if zs[0] >= curKey {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		skips[sh] = lo
	}
	return skips, nil
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

// readDeadLetters reads, in one pipeline, the fields each candidate's
// letter needs: the run's meta and info (workflow, tenant, service), the
// task's state, error and definition (its queue and handler; only its
// header and handler are decoded). The definition of a task of a run of
// more than 16 tasks holds its payload, which comes along: the price of
// writing nothing per letter (EventRead reads it alike). A
// candidate whose run or task is gone (its hash expired before the
// janitor pruned it), or that is no longer failed or dead, is left out.
func (s *Store) readDeadLetters(ctx context.Context, cands []deadCandidate) ([]store.DeadLetter, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(cands))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cands {
			cmds[i] = p.HMGet(ctx, s.keys.run(c.shard, c.id), "m", "i", "s:"+c.task, "e:"+c.task, "d:"+c.task)
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]store.DeadLetter, 0, len(cands))
	for i, c := range cands {
		v := cmds[i].Val()
		ms, ok1 := v[0].(string)
		info, ok2 := v[1].(string)
		ss, ok3 := v[2].(string)
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		m, err := decodeMeta(ms)
		if err != nil {
			continue // a corrupt record is RunGet's to report
		}
		ri, err := decodeRunInfo(info)
		if err != nil {
			continue
		}
		st, err := decodeState(ss)
		if err != nil || (st.status != store.TaskFailed && st.status != store.TaskDead) {
			continue
		}
		errText, _ := v[3].(string)
		at := c.atMs
		if at < 0 {
			at = m.created + st.ended
		}
		l := store.DeadLetter{RunID: c.id, Task: c.task, Workflow: ri.Workflow, Tenant: ri.Tenant, Service: ri.Service,
			Status: st.status, Error: errText, At: msTime(at)}
		if d, ok := v[4].(string); ok {
			if def, err := decodeDef(c.task, d, true); err == nil {
				l.Queue, l.Handler = def.spec.Queue, def.spec.Handler
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// DeadLetterPurge removes the named letters from the index and the runs'
// lists, one dead_letter_purge.lua call per shard named. See
// [store.DeadLetterStore].
func (s *Store) DeadLetterPurge(ctx context.Context, params *store.DeadLetterPurgeParams) (*store.DeadLetterPurgeResult, error) {
	byShard := map[int][]any{}
	for _, l := range params.Letters {
		shard, err := s.runShard(l.RunID)
		if err != nil {
			continue // an id this store never issued names no letter
		}
		if byShard[shard] == nil {
			byShard[shard] = []any{s.keys.base(shard)}
		}
		byShard[shard] = append(byShard[shard], l.RunID, l.Task)
	}
	res := &store.DeadLetterPurgeResult{}
	for shard, args := range byShard {
		v, err := s.runScript(ctx, scriptDeadLetterPurge, []string{s.keys.deadIndex(shard)}, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		n := r.int()
		if r.err != nil {
			return nil, r.err
		}
		res.Purged += int(n)
	}
	return res, nil
}
