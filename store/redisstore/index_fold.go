package redisstore

import (
	"context"
	"fmt"
)

// foldChunk is the most event stream entries one index_fold.lua call
// reads: about a millisecond of Redis time for entries of a few events.
const foldChunk = 1024

// foldIndexes files in the creation indexes (ia and the name streams) of
// every shard the runs created since the last fold, so that a read of
// those indexes that follows answers every run created before it began.
// A create of record format 8 writes none of its index entries, only its
// events, which are the journal this folds from (names.fold in
// lua/lib_names.lua). One pipeline of index_fold.lua calls, one per shard,
// each reading at most foldChunk entries, until every shard answers fewer:
// a call reads at most the events written since the last fold, and the
// writes that trim the stream fold first, so never more than its cap.
func (s *Store) foldIndexes(ctx context.Context) error {
	live := make([]int, s.cfg.shards)
	for sh := range live {
		live[sh] = sh
	}
	for len(live) > 0 {
		calls := make([]scriptCall, len(live))
		for i, sh := range live {
			calls[i] = scriptCall{keys: []string{s.keys.events(sh)}, args: []any{s.keys.base(sh), foldChunk}}
		}
		cmds, err := s.pipeline(ctx, scriptIndexFold, calls, false)
		if err != nil {
			return mapErr(err)
		}
		next := live[:0]
		for i, c := range cmds {
			v, err := c.Slice()
			if err != nil {
				return mapErr(err)
			}
			r := &reply{v: v}
			read := r.int()
			if r.err != nil {
				return fmt.Errorf("redisstore: index_fold: %w", r.err)
			}
			if read >= foldChunk {
				next = append(next, live[i])
			}
		}
		live = next
	}
	return nil
}
