package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// idBlockSize is how many run ids one INCRBY of the sequence reserves for a
// store value (at least one per shard). Taking ids a block at a time leaves
// a submit one round trip, the create, most of the time; the price is gaps
// (a process that stops leaves the rest of its block unused, and a keyed
// run skips the ids before one on its shard) and ids of different processes
// that interleave out of creation order.
const idBlockSize = 64

// idBlock hands out the run ids of the block this store reserved last, in
// increasing order.
type idBlock struct {
	mu   sync.Mutex
	next int64 // next id to hand out
	end  int64 // last id of the block; next > end means used up
}

// take returns the next run id on shard want (of shards), or the next run
// id at all when want is negative, reserving a new block when the current
// one has none left. Ids skipped on the way stay unused. A reservation
// retried after a lost reply skips a block, which only leaves a gap.
func (b *idBlock) take(ctx context.Context, c redis.Cmdable, seq string, shards, want int) (int64, error) {
	size := int64(max(idBlockSize, shards))
	n := int64(shards)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.next == 0 || b.next > b.end {
			end, err := c.IncrBy(ctx, seq, size).Result()
			if err != nil {
				return 0, err
			}
			b.next, b.end = end-size+1, end
		}
		id := b.next
		if want >= 0 && n > 1 {
			id += ((int64(want)-id%n)%n + n) % n
		}
		if id <= b.end {
			b.next = id + 1
			return id, nil
		}
		b.next = b.end + 1
	}
}
