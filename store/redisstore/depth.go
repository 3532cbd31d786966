package redisstore

import (
	"context"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// QueueDepth counts the entries of each queue's ready lists and delayed
// zset on every shard, in one pipeline; see [store.QueueDepther]. Entries
// are deleted lazily, so the counts may include tasks a claim would drop
// (those of cancelled runs, say).
func (s *Store) QueueDepth(ctx context.Context, params *store.QueueDepthParams) (*store.QueueDepthResult, error) {
	queues, err := checkQueues(params.Queues)
	if err != nil {
		return nil, err
	}
	type count struct {
		q       int
		ready   []*redis.IntCmd
		delayed *redis.IntCmd
	}
	var counts []count
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for shard := 0; shard < s.cfg.shards; shard++ {
			for qi, q := range queues {
				c := count{q: qi, delayed: p.ZCard(ctx, s.keys.delayed(shard, q))}
				for prio := 3; prio >= 0; prio-- {
					c.ready = append(c.ready, p.LLen(ctx, s.keys.ready(shard, q, prio)))
				}
				counts = append(counts, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &store.QueueDepthResult{Queues: make([]store.QueueDepth, len(queues))}
	for i, q := range queues {
		res.Queues[i].Queue = q
	}
	for _, c := range counts {
		d := &res.Queues[c.q]
		d.Delayed += int(c.delayed.Val())
		for _, r := range c.ready {
			d.Ready += int(r.Val())
		}
	}
	return res, nil
}

var _ store.QueueDepther = (*Store)(nil)
