package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// ReadyWait blocks until work may be claimable. See [store.Store.ReadyWait].
// It blocks with BLPOP on the wake lists of its queues: one BLPOP over
// every shard's lists (at most waitChunk per call), or, on a Cluster
// client, where one BLPOP reaches one slot, one BLPOP per shard at the
// same time, each on a connection of its own, the first token ending the
// wait (ready_cluster.go). Every script that makes a task ready or
// delayed pushes a token to that task's queue list, and a claim that takes
// a task its own call readied takes the token back, so a token is waiting
// for any work that appeared after the caller's last empty claim; delayed
// tasks becoming due are the caller's timer (NextDueAt), not a token. A
// claim that sets a task aside for want of its handler pushes a token to
// the aside wake list of that (queue, handler), which ReadyWait waits on
// too for params.Handlers, so the process with the handler wakes even when
// another took the queue's token. A zero Timeout means no timeout.
func (s *Store) ReadyWait(ctx context.Context, params *store.ReadyWaitParams) error {
	queues, err := checkQueues(params.Queues)
	if err != nil {
		return err
	}
	order := s.shardOrder()
	var deadline time.Time
	if params.Timeout > 0 {
		deadline = clock.Real{}.Now().Add(params.Timeout)
	}
	byShard := make([][]string, s.cfg.shards)
	var all []string
	for _, shard := range order {
		byShard[shard] = s.wakeKeys(shard, queues)
		for _, q := range queues {
			for _, h := range params.Handlers {
				byShard[shard] = append(byShard[shard], s.keys.asideWake(shard, q, h))
			}
		}
		all = append(all, byShard[shard]...)
	}
	if cc, ok := s.client.(*redis.ClusterClient); ok && len(byShard) > 1 {
		if _, err := s.blpopShards(ctx, cc, byShard, deadline); err != nil && ctx.Err() == nil {
			return mapErr(err)
		}
		return nil
	}
	for {
		if ctx.Err() != nil {
			return nil
		}
		d := waitChunk
		if !deadline.IsZero() {
			left := deadline.Sub(clock.Real{}.Now())
			if left <= 0 {
				return nil
			}
			if left < d {
				d = left
			}
		}
		got, err := s.blpop(ctx, all, d, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return mapErr(err)
		}
		if got {
			return nil
		}
	}
}
