package redisstore

import (
	"context"
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
// each chunk in one pipeline, until the page is full or the index is
// done: 2 round trips per chunk and shard (a filter that matches few
// letters reads further). For one run it reads the run's list x:<run> and
// its fields: 2 round trips.
func (s *Store) DeadLetterList(ctx context.Context, params *store.DeadLetterListParams) (*store.DeadLetterListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
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
		max, min := "+inf", "-inf"
		if !params.Until.IsZero() {
			max = "(" + strconv.FormatInt(params.Until.UnixMilli(), 10)
		}
		if params.Cursor != "" && (params.Until.IsZero() || curMs < params.Until.UnixMilli()) {
			max = strconv.FormatInt(curMs, 10)
		}
		if !params.Since.IsZero() {
			min = strconv.FormatInt(params.Since.UnixMilli(), 10)
		}
		for shard := 0; shard < s.cfg.shards; shard++ {
			matched := 0
			for offset := int64(0); matched <= params.Limit; offset += deadChunk {
				zs, err := s.client.ZRevRangeByScoreWithScores(ctx, s.keys.deadIndex(shard), &redis.ZRangeBy{
					Max: max, Min: min, Offset: offset, Count: deadChunk}).Result()
				if err != nil {
					return nil, mapErr(err)
				}
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
					return nil, err
				}
				for i := range letters {
					if bounds.Matches(&letters[i]) && after(&letters[i]) {
						found = append(found, letters[i])
						matched++
					}
				}
				if len(zs) < deadChunk {
					break
				}
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		return store.DeadLetterBefore(found[i].At.UnixMilli(), found[i].RunID+" "+found[i].Task,
			found[j].At.UnixMilli(), found[j].RunID+" "+found[j].Task)
	})
	res := &store.DeadLetterListResult{Letters: found}
	if len(found) > params.Limit {
		res.Letters = found[:params.Limit]
		res.NextCursor = store.DeadLetterCursor(res.Letters[len(res.Letters)-1])
	}
	if res.Letters == nil {
		res.Letters = []store.DeadLetter{}
	}
	return res, nil
}

// readDeadLetters reads, in one pipeline, the fields each candidate's
// letter needs: the run's meta and info, the task's state and error. A
// candidate whose run or task is gone (its hash expired before the
// janitor pruned it), or that is no longer failed or dead, is left out.
func (s *Store) readDeadLetters(ctx context.Context, cands []deadCandidate) ([]store.DeadLetter, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(cands))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cands {
			cmds[i] = p.HMGet(ctx, s.keys.run(c.shard, c.id), "m", "i", "s:"+c.task, "e:"+c.task)
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
		out = append(out, store.DeadLetter{RunID: c.id, Task: c.task, Workflow: ri.Workflow, Status: st.status,
			Error: errText, At: msTime(at)})
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
