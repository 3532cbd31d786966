package redisstore

import (
	"context"
	"strconv"

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
	kinds    string
	pick     string
	max, cid string
}

// chosen replaces a count's read of alternatives, once run_count.lua has
// chosen one (its first key at best, 1-based), with a read of each key of
// it, the first going on from the position of the answer.
func (c *countShard) chosen(best int, max, lastS, lastM string) {
	st := c.streams[c.at]
	g, _ := strconv.Atoi(st.pick)
	if best < 1 || g < 1 || best-1+g > len(st.keys) {
		g, best = len(st.keys), 1
	}
	var each []countStream
	for i := best - 1; i < best-1+g; i++ {
		each = append(each, countStream{keys: st.keys[i : i+1], kinds: st.kinds[i : i+1], max: max})
	}
	each[0].max, each[0].cid = lastS, lastM
	c.streams = append(c.streams[:c.at], append(each, c.streams[c.at+1:]...)...)
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
			c.streams = []countStream{{keys: src.keys, kinds: src.kinds, pick: src.pick, max: max}}
		} else {
			for i, k := range src.keys {
				c.streams = append(c.streams, countStream{keys: []string{k}, kinds: src.kinds[i : i+1], max: max})
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
			args = append(args, st.kinds)
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
			best := r.int()
			if r.err != nil {
				return nil, r.err
			}
			if c.streams[c.at].pick != "" {
				c.chosen(int(best), max, lastS, lastM)
				if lastS == "" {
					// nothing was read of the first key: it starts afresh
					c.streams[c.at].max = max
				}
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
