package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"
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

// A run id is "<n>-<nonce>": n from the sequence, the nonce drawn from
// crypto/rand for each block reservation, nonceLen characters of [a-z0-9]
// (36^10, about 2^51.7). The sequence alone repeats after Redis loses data
// (a restart without persistence, FLUSHALL, a failover to a replica that
// lagged): a new reservation starts again at numbers handed out before,
// and a store value still holding part of an old block hands out numbers
// the new reservations hand out too. The nonce keeps those ids apart, so
// an id names one create call only, across data loss too: a create that
// finds a run under its id found the one an earlier try of the same call
// wrote. Within one store value ids increase in the contract's order (a
// later id is longer, or as long and bytewise greater): n increases and
// comes first, and the nonce, of fixed length, only decides between ids of
// equal n, which one store value never hands out twice.
const nonceLen = 10

// idBlock hands out the run ids of the block this store reserved last, in
// increasing order.
type idBlock struct {
	mu    sync.Mutex
	next  int64 // next number to hand out
	end   int64 // last number of the block; next > end means used up
	last  int64 // last number handed out, 0 before the first
	nonce string
}

// take returns the next run id on shard want (of shards), or the next run
// id at all when want is negative, and its shard, reserving a new block
// when the current one has none left. Numbers skipped on the way stay
// unused. A reservation retried after a lost reply skips a block, which
// only leaves a gap. A reservation that comes back at or below the last
// number handed out (the sequence went back: Redis lost data) moves the
// sequence past it, so that ids keep increasing for this store value and
// the sequence does not stay behind for the others.
func (b *idBlock) take(ctx context.Context, c redis.Cmdable, seq string, shards, want int) (string, int, error) {
	size := int64(max(idBlockSize, shards))
	n := int64(shards)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.next == 0 || b.next > b.end {
			end, err := c.IncrBy(ctx, seq, size).Result()
			if err != nil {
				return "", 0, err
			}
			if end-size+1 <= b.last {
				if end, err = c.IncrBy(ctx, seq, b.last+size-end).Result(); err != nil {
					return "", 0, err
				}
			}
			nonce, err := newNonce()
			if err != nil {
				return "", 0, err
			}
			b.next, b.end, b.nonce = end-size+1, end, nonce
		}
		id := b.next
		if want >= 0 && n > 1 {
			id += ((int64(want)-id%n)%n + n) % n
		}
		if id <= b.end {
			b.next = id + 1
			b.last = id
			return strconv.FormatInt(id, 10) + "-" + b.nonce, int(id % n), nil
		}
		b.next = b.end + 1
	}
}

// nonceSpace is 36^nonceLen: the nonces there are.
const nonceSpace = 3656158440062976

// newNonce draws a block's nonce. The modulo bias (2^64 is no multiple of
// 36^10) is below one part in 5000 and does not matter for ids that only
// need to differ.
func newNonce() (string, error) {
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	s := strconv.FormatUint(binary.BigEndian.Uint64(raw[:])%nonceSpace, 36)
	return strings.Repeat("0", nonceLen-len(s)) + s, nil
}
