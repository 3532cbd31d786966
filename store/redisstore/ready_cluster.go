package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/clock"
)

// Waiting on many shards of a cluster at once. A cluster refuses a BLPOP
// over keys of several slots, and shards are slots, so an idle worker on a
// cluster client blocks on every shard at the same time, each on a
// connection of its own to the master of the shard's slot: a wait set.
//
// The first wake-up token ends the wait at once. The set's other BLPOPs
// are let go without waiting for them: CLIENT UNBLOCK is sent to each (as
// if it had timed out, taking nothing) in the background, and a BLPOP that
// answers while no wait holds the set pushes back the token it took, if
// any, for whoever else waits. A wait finds the set's BLPOPs still in
// flight and takes them over (they block on the same keys), so a CLIENT
// UNBLOCK that reached its server before the BLPOP it meant (it then
// unblocks nothing) costs nothing either: no wait ever waits for a BLPOP
// to be let go. A BLPOP that times out during a wait is sent again, so a
// wait blocks as long as it is asked to. An idle worker costs one blocked
// client per shard and one BLPOP per shard per waitChunk.
//
// The set is kept for the next wait of the store on the same wake lists.
// Its connections are its own (one client per master, see takeWaitSet);
// they close when the set is retired: replaced by a set on other lists,
// broken, or left by a wait whose context ended.

// waitSet is the blocking connections of the waits on one set of wake
// lists, by shard.
type waitSet struct {
	cc  *redis.ClusterClient
	sig string
	// keys are the wake lists of each shard.
	keys [][]string

	// clients are the set's own, one per master; conns are made by them.
	clients []*redis.Client

	mu    sync.Mutex
	conns []*waitConn
	// open counts the conns not closed; the clients close with the last.
	open int
	// owner receives the answers while a wait holds the set; nil between
	// waits.
	owner chan waitAnswer
	// retired: the set is not kept; each connection closes once its BLPOP
	// has answered. broken: a BLPOP failed (a resharded slot, a broken
	// connection), so the next wait opens new connections.
	retired, broken bool
}

// waitConn is one shard's blocking connection.
type waitConn struct {
	shard int
	conn  *redis.Conn
	// node is the master's client, for the CLIENT UNBLOCK of conn.
	node *redis.Client
	id   int64
	// busy: a BLPOP is in flight; closed: conn is closed.
	busy, closed bool
}

// waitAnswer is one BLPOP's answer: a token taken from key, or none.
type waitAnswer struct {
	shard      int
	key, token string
	err        error
}

func (a waitAnswer) took() bool { return a.err == nil && a.key != "" }

// waitSig names a set of wake lists.
func waitSig(keys [][]string) string {
	var b strings.Builder
	for _, ks := range keys {
		b.WriteString(strings.Join(ks, "\x00"))
		b.WriteByte('\x01')
	}
	return b.String()
}

// takeWaitSet returns the kept set when it blocks on keys (by shard), or
// opens a new one, one connection per shard. The connections are a
// client's of their own per master, out of the cluster client's pools:
// they stay blocked, and a cluster client's pool (five connections per
// CPU and node by default) would otherwise be left with too few for the
// store's other calls, or none.
func (s *Store) takeWaitSet(ctx context.Context, cc *redis.ClusterClient, keys [][]string) (*waitSet, error) {
	sig := waitSig(keys)
	select {
	case ws := <-s.waiters:
		ws.mu.Lock()
		ok := ws.sig == sig && !ws.broken
		ws.mu.Unlock()
		if ok {
			return ws, nil
		}
		ws.retire()
	default:
	}
	nodes := make([]*redis.Client, len(keys))
	count := map[*redis.Client]int{}
	for shard := range keys {
		node, err := cc.MasterForKey(ctx, s.keys.wake(shard, "x"))
		if err != nil {
			return nil, err
		}
		nodes[shard] = node
		count[node]++
	}
	ws := &waitSet{cc: cc, sig: sig, keys: keys, conns: make([]*waitConn, len(keys))}
	own := map[*redis.Client]*redis.Client{}
	for node, n := range count {
		o := *node.Options()
		o.PoolSize, o.MaxIdleConns, o.MinIdleConns = n, n, 0
		own[node] = redis.NewClient(&o)
		ws.clients = append(ws.clients, own[node])
	}
	for shard, node := range nodes {
		conn := own[node].Conn()
		ws.open++
		c := &waitConn{shard: shard, conn: conn, node: node}
		ws.conns[shard] = c
		id, err := conn.ClientID(ctx).Result()
		if err != nil {
			ws.retire()
			return nil, err
		}
		c.id = id
	}
	return ws, nil
}

// keepWaitSet keeps ws for the next wait, or retires it when another set
// is kept already.
func (s *Store) keepWaitSet(ws *waitSet) {
	select {
	case s.waiters <- ws:
	default:
		ws.retire()
	}
}

// blpopShards blocks on the wake lists of every shard at once until a
// token comes, until deadline (none when zero) or until ctx ends, and
// reports whether it took a token. A wait that ends with ctx takes none: a
// token taken meanwhile is pushed back.
func (s *Store) blpopShards(ctx context.Context, cc *redis.ClusterClient, keys [][]string, deadline time.Time) (bool, error) {
	ws, err := s.takeWaitSet(ctx, cc, keys)
	if err != nil {
		return false, err
	}
	got, err := ws.wait(ctx, deadline)
	if errors.Is(err, errWaitSetBroken) {
		// a connection broke between waits: this wait opens new ones
		ws.retire()
		if ws, err = s.takeWaitSet(ctx, cc, keys); err != nil {
			return false, err
		}
		got, err = ws.wait(ctx, deadline)
	}
	if err != nil || ctx.Err() != nil {
		// A resharded slot (MOVED) or a broken connection: the next wait
		// opens new connections. A wait whose context ended closes them:
		// its worker is stopping, and they are not the cluster client's,
		// which its owner closes.
		ws.retire()
		return false, err
	}
	s.keepWaitSet(ws)
	return got, nil
}

// errWaitSetBroken is wait's answer when a BLPOP of the set failed before
// the wait took it.
var errWaitSetBroken = errors.New("redisstore: a blocking connection broke")

// wait holds the set until a token comes, deadline passes or ctx ends.
func (ws *waitSet) wait(ctx context.Context, deadline time.Time) (bool, error) {
	own := make(chan waitAnswer, len(ws.conns))
	ws.mu.Lock()
	if ws.broken {
		ws.mu.Unlock()
		return false, errWaitSetBroken
	}
	ws.owner = own
	for _, c := range ws.conns {
		if !c.busy {
			ws.sendLocked(c)
		}
	}
	ws.mu.Unlock()
	var expire <-chan time.Time
	if !deadline.IsZero() {
		t := clock.Real{}.NewTimer(deadline.Sub(clock.Real{}.Now()))
		defer t.Stop()
		expire = t.C()
	}
	var took waitAnswer
	var err error
loop:
	for {
		select {
		case a := <-own:
			if a.err != nil {
				err = a.err
				break loop
			}
			if a.took() {
				took = a
				break loop
			}
			// timed out (or let go by a late CLIENT UNBLOCK): block again
			ws.mu.Lock()
			if c := ws.conns[a.shard]; !c.busy {
				ws.sendLocked(c)
			}
			ws.mu.Unlock()
		case <-expire:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	ws.release(own)
	if took.took() && ctx.Err() != nil {
		// One token wakes this caller only while it waits.
		ws.pushBack(took)
		return false, err
	}
	return took.took(), err
}

// sendLocked sends a BLPOP on c; its answer goes to the wait that holds
// the set then, or is settled by settle.
func (ws *waitSet) sendLocked(c *waitConn) {
	c.busy = true
	keys := ws.keys[c.shard]
	go func() {
		v, err := c.conn.BLPop(context.Background(), waitChunk, keys...).Result()
		a := waitAnswer{shard: c.shard, err: err}
		if errors.Is(err, redis.Nil) {
			a.err = nil
		} else if err == nil && len(v) == 2 {
			a.key, a.token = v[0], v[1]
		}
		ws.settle(c, a)
	}()
}

// settle hands a BLPOP's answer to the wait holding the set, or, between
// waits, pushes back the token it took and closes a retired or broken
// connection.
func (ws *waitSet) settle(c *waitConn, a waitAnswer) {
	ws.mu.Lock()
	c.busy = false
	if a.err != nil {
		ws.broken = true
	}
	if ws.owner != nil {
		ws.owner <- a // room for one answer per connection
		ws.mu.Unlock()
		return
	}
	shut := ws.retired || a.err != nil
	ws.mu.Unlock()
	if a.took() {
		ws.pushBack(a)
	}
	if shut {
		ws.close(c)
	}
}

// release ends a wait's hold: the answers it did not read are settled, and
// the BLPOPs still in flight are let go in the background.
func (ws *waitSet) release(own chan waitAnswer) {
	ws.mu.Lock()
	ws.owner = nil
	var late []waitAnswer
	for len(own) > 0 {
		late = append(late, <-own)
	}
	ws.mu.Unlock()
	for _, a := range late {
		if a.took() {
			ws.pushBack(a)
		}
	}
	ws.unblock()
}

// unblock sends CLIENT UNBLOCK, in the background, to the connections
// with a BLPOP in flight: one pipeline per master.
func (ws *waitSet) unblock() {
	byNode := map[*redis.Client][]int64{}
	ws.mu.Lock()
	for _, c := range ws.conns {
		if c != nil && c.busy {
			byNode[c.node] = append(byNode[c.node], c.id)
		}
	}
	ws.mu.Unlock()
	for node, ids := range byNode {
		go func() {
			_, _ = node.Pipelined(context.Background(), func(p redis.Pipeliner) error {
				for _, id := range ids {
					p.ClientUnblock(context.Background(), id)
				}
				return nil
			})
		}()
	}
}

// pushBack returns a token to its list for whoever else waits.
func (ws *waitSet) pushBack(a waitAnswer) {
	_ = ws.cc.LPush(context.Background(), a.key, a.token).Err()
}

// retire closes the set's idle connections and lets go of the others,
// which close once their BLPOP has answered.
func (ws *waitSet) retire() {
	ws.mu.Lock()
	ws.retired = true
	var idle []*waitConn
	for _, c := range ws.conns {
		if c != nil && !c.busy {
			idle = append(idle, c)
		}
	}
	ws.mu.Unlock()
	for _, c := range idle {
		ws.close(c)
	}
	ws.unblock()
}

// close closes c, once, and the set's clients with the last connection.
func (ws *waitSet) close(c *waitConn) {
	ws.mu.Lock()
	if c.closed {
		ws.mu.Unlock()
		return
	}
	c.closed = true
	ws.open--
	last := ws.open == 0 && ws.retired
	ws.mu.Unlock()
	_ = c.conn.Close()
	if last {
		for _, cl := range ws.clients {
			_ = cl.Close()
		}
	}
}
