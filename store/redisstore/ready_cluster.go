package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Waiting on many shards of a cluster at once. A cluster refuses a BLPOP
// over keys of several slots, and shards are slots, so an idle worker on a
// cluster client blocks on every shard at the same time, each on a
// connection of its own to the master of the shard's slot. The first wake
// token ends the wait: the other blocked connections are released with
// CLIENT UNBLOCK (as if their BLPOP had timed out, taking nothing), so
// no token is consumed for nothing and no wait lingers. The connections are
// kept for the next wait; an idle worker costs one blocked client per shard
// and no command more than one BLPOP per shard per waitChunk.

// shardWaiter is one shard's blocking connection.
type shardWaiter struct {
	conn *redis.Conn
	// node is the master's client, for the CLIENT UNBLOCK of conn.
	node *redis.Client
	id   int64
}

// shardWaiters are the connections of one wait, by shard.
type shardWaiters []*shardWaiter

func (ws shardWaiters) close() {
	for _, w := range ws {
		if w != nil {
			_ = w.conn.Close()
		}
	}
}

// takeWaiters returns the kept connections, or opens one per shard.
func (s *Store) takeWaiters(ctx context.Context, cc *redis.ClusterClient) (shardWaiters, error) {
	select {
	case ws := <-s.waiters:
		return ws, nil
	default:
	}
	ws := make(shardWaiters, s.cfg.shards)
	for shard := range ws {
		node, err := cc.MasterForKey(ctx, s.keys.wake(shard, "x"))
		if err != nil {
			ws.close()
			return nil, err
		}
		conn := node.Conn()
		id, err := conn.ClientID(ctx).Result()
		if err != nil {
			_ = conn.Close()
			ws.close()
			return nil, err
		}
		ws[shard] = &shardWaiter{conn: conn, node: node, id: id}
	}
	return ws, nil
}

// keepWaiters keeps the connections for the next wait, or closes them when
// another set is kept already.
func (s *Store) keepWaiters(ws shardWaiters) {
	select {
	case s.waiters <- ws:
	default:
		ws.close()
	}
}

// blpopShards blocks on the wake lists of every shard at once for at most
// d, perShard[i] being shard order[i]'s keys, and reports whether it took a
// token. A wait that ends with ctx takes none: a token popped meanwhile is
// pushed back.
func (s *Store) blpopShards(ctx context.Context, cc *redis.ClusterClient, order []int, perShard [][]string, d time.Duration) (bool, error) {
	ws, err := s.takeWaiters(ctx, cc)
	if err != nil {
		return false, err
	}
	type answer struct {
		i   int
		v   []string
		err error
	}
	bg := context.WithoutCancel(ctx)
	answers := make(chan answer, len(order))
	for i, shard := range order {
		w := ws[shard]
		go func() {
			v, err := w.conn.BLPop(bg, d, perShard[i]...).Result()
			if errors.Is(err, redis.Nil) {
				err = nil
			}
			answers <- answer{i: i, v: v, err: err}
		}()
	}
	got, pending := false, len(order)
	var firstErr error
	done := make([]bool, len(order))
	collect := func(a answer) {
		pending--
		done[a.i] = true
		if a.err != nil && firstErr == nil {
			firstErr = a.err
		}
		if len(a.v) == 2 {
			if got || ctx.Err() != nil {
				// One token wakes this caller; another goes back for
				// whoever else waits.
				_ = cc.LPush(bg, a.v[0], a.v[1]).Err()
			} else {
				got = true
			}
		}
	}
	for pending > 0 && !got && firstErr == nil {
		select {
		case a := <-answers:
			collect(a)
		case <-ctx.Done():
			got = false
			goto release
		}
	}
release:
	for i, shard := range order {
		if !done[i] {
			_ = ws[shard].node.ClientUnblock(bg, ws[shard].id).Err()
		}
	}
	for pending > 0 {
		collect(<-answers)
	}
	if firstErr != nil {
		// A resharded slot (MOVED) or a broken connection: the next wait
		// opens new connections.
		ws.close()
		return got, firstErr
	}
	s.keepWaiters(ws)
	return got, nil
}
