package redisstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// countChunk is the most index entries one run_count.lua call reads: a
// count of 10,000 runs is ten calls of a few milliseconds each, between
// which Redis serves the hot path, rather than one call that holds it for
// tens of milliseconds.
const countChunk = 1000

// countStream is one index a count reads on a shard, with the position it
// goes on from.
type countStream struct {
	keys     []string
	pick     string
	max, cid string
}

// countShard is the state of a count on one shard: its indexes (one, or
// one per status asked when the statuses' indexes are merged), the one
// being read, and what is left of the read bound.
type countShard struct {
	base    string
	streams []countStream
	at      int
	left    int
	checks  []any
}

// countByReading counts the runs of f per status by reading the index
// each shard's querySource names, with run_count.lua: every shard in one
// pipeline per round, each call reading at most countChunk entries, until
// each shard's index is over or limit entries of it were read (then the
// answer is Capped). A round trip per countChunk entries of the largest
// shard.
func (s *Store) countByReading(ctx context.Context, f *store.RunFilter, limit int) (*store.RunCountResult, error) {
	out := &store.RunCountResult{Counts: map[store.RunStatus]int64{}}
	max, min := scoreRange(f)
	shards := make([]*countShard, s.cfg.shards)
	for sh := range shards {
		src := s.querySource(sh, f)
		c := &countShard{base: s.keys.base(sh), left: limit, checks: src.checks}
		if src.pick != "" {
			c.streams = []countStream{{keys: src.keys, pick: src.pick, max: max}}
		} else {
			for _, k := range src.keys {
				c.streams = append(c.streams, countStream{keys: []string{k}, max: max})
			}
		}
		shards[sh] = c
	}
	statuses := []store.RunStatus{store.RunPending, store.RunRunning, store.RunCompleted, store.RunFailed, store.RunCancelled}
	for {
		var live []*countShard
		var calls []scriptCall
		for _, c := range shards {
			if c.at == len(c.streams) {
				continue
			}
			st := &c.streams[c.at]
			args := append([]any{c.base, st.max, st.cid, min, minInt(countChunk, c.left), st.pick}, c.checks...)
			live = append(live, c)
			calls = append(calls, scriptCall{keys: st.keys, args: args})
		}
		if len(calls) == 0 {
			return out, nil
		}
		replies, err := s.pipeScripts(ctx, scriptRunCount, calls)
		if err != nil {
			return nil, err
		}
		for i, v := range replies {
			c, r := live[i], &reply{v: v}
			more, lastS, lastM, read := r.int(), r.str(), r.str(), r.int()
			for _, st := range statuses {
				if n := r.int(); n > 0 {
					out.Counts[st] += n
				}
			}
			if r.err != nil {
				return nil, r.err
			}
			c.left -= int(read)
			switch {
			case more == 0:
				c.at++ // this index is over
			case c.left <= 0:
				out.Capped = true
				c.at = len(c.streams)
			default:
				st := &c.streams[c.at]
				st.max, st.cid = lastS, lastM
			}
		}
	}
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}
