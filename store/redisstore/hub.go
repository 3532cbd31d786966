package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// hub shares one pub/sub connection among every waiter of a Store: RunWait
// callers on their run's channel and event readers on the events channel.
// The connection is opened by the first watcher and closed when the last
// one leaves, so an idle store holds none. A channel is subscribed while at
// least one watcher wants it.
//
// A watcher is told (its signal) of every message on its channel and of
// every event that may have hidden one: a reconnect, after which go-redis
// subscribes again to every channel, and a failed receive. The watcher then
// reads the state it waits for again, so a message lost to a reconnect is
// never a wait that hangs. A watcher's readers also read again at any
// signal before its subscription is confirmed: a message proves the
// subscription, so a confirmation the hub never matched (seen once in CI: a
// wait of 1,000 that never turned ready) delays nothing past the end.
type hub struct {
	client redis.UniversalClient

	mu    sync.Mutex
	ps    *redis.PubSub
	done  chan struct{} // closed when the receive loop of ps ends
	chans map[string]*hubChan
	// pending counts the subscriptions of each channel sent and not yet
	// confirmed: a confirmation owed to an earlier subscription of a
	// channel unsubscribed since must not make a new watcher ready.
	pending map[string]int
}

// hubChan is one subscribed channel and its watchers.
type hubChan struct {
	watchers map[*watcher]struct{}
	// confirmed reports that the server confirmed the subscription since
	// it was last sent; ready watchers wait for it.
	confirmed bool
}

// watcher is one wait on one channel.
type watcher struct {
	h       *hub
	channel string
	// ready is closed once the subscription is confirmed: messages
	// published after that reach signal.
	ready chan struct{}
	// signal holds one token when there is something to look at again.
	signal chan struct{}
}

// hubPing is how long the receive loop waits for a message before it pings
// the server, so a connection that died silently is noticed.
const hubPing = 30 * time.Second

func newHub(client redis.UniversalClient) *hub {
	return &hub{client: client, chans: map[string]*hubChan{}, pending: map[string]int{}}
}

// watch starts a wait on channel. The caller must call stop when done.
func (h *hub) watch(ctx context.Context, channel string) (*watcher, error) {
	w := &watcher{h: h, channel: channel, ready: make(chan struct{}), signal: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	start := h.ps == nil
	if start {
		h.ps = h.client.Subscribe(context.WithoutCancel(ctx))
		h.done = make(chan struct{})
	}
	c := h.chans[channel]
	if c == nil {
		c = &hubChan{watchers: map[*watcher]struct{}{}}
		h.chans[channel] = c
		h.pending[channel]++
		if err := h.ps.Subscribe(ctx, channel); err != nil {
			h.unpendLocked(channel)
			delete(h.chans, channel)
			h.closeIfIdleLocked()
			return nil, mapErr(err)
		}
	}
	if start {
		// Receiving starts after the first SUBSCRIBE made the connection:
		// on a cluster client it is made to the master of that channel's
		// slot (a receive on a PubSub with no channel yet would make it to
		// any node).
		go h.receive(h.ps, h.done)
	}
	c.watchers[w] = struct{}{}
	if c.confirmed {
		close(w.ready)
	}
	return w, nil
}

// stop ends the wait; the last watcher of a channel unsubscribes it and
// the last watcher of all closes the connection.
func (w *watcher) stop() {
	h := w.h
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[w.channel]
	if c == nil {
		return
	}
	delete(c.watchers, w)
	if len(c.watchers) > 0 {
		return
	}
	delete(h.chans, w.channel)
	if len(h.chans) > 0 {
		_ = h.ps.Unsubscribe(context.Background(), w.channel)
		return
	}
	h.closeIfIdleLocked()
}

func (h *hub) closeIfIdleLocked() {
	if len(h.chans) > 0 || h.ps == nil {
		return
	}
	_ = h.ps.Close()
	h.ps = nil
	h.done = nil
	h.pending = map[string]int{}
}

func (h *hub) unpendLocked(channel string) bool {
	n, ok := h.pending[channel]
	if !ok {
		return false
	}
	if n <= 1 {
		delete(h.pending, channel)
	} else {
		h.pending[channel] = n - 1
	}
	return true
}

// receive reads ps until it is closed, passing each message to the
// watchers of its channel and each confirmation to the channel's ready
// watchers. A failed receive signals every watcher, and go-redis reconnects
// and subscribes again on the next receive.
func (h *hub) receive(ps *redis.PubSub, done chan struct{}) {
	defer close(done)
	ctx := context.Background()
	backoff := 10 * time.Millisecond
	for {
		msg, err := ps.ReceiveTimeout(ctx, hubPing)
		if err != nil {
			if errors.Is(err, redis.ErrClosed) || !h.current(ps) {
				return
			}
			var nerr interface{ Timeout() bool }
			if errors.As(err, &nerr) && nerr.Timeout() {
				if perr := ps.Ping(ctx); perr == nil {
					continue
				}
			}
			h.signalAll(ps)
			t := time.NewTimer(backoff)
			<-t.C
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 10 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Message:
			h.signal(ps, m.Channel, false)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				// a first subscription, or one sent again after a reconnect:
				// whatever was published in between is unknown.
				h.signal(ps, m.Channel, true)
			}
		}
	}
}

// current reports whether ps is still the hub's connection.
func (h *hub) current(ps *redis.PubSub) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ps == ps
}

func (h *hub) signal(ps *redis.PubSub, channel string, confirm bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ps != ps {
		return
	}
	if confirm && h.unpendLocked(channel) {
		c := h.chans[channel]
		if c != nil && !c.confirmed && h.pending[channel] == 0 {
			c.confirmed = true
			for w := range c.watchers {
				close(w.ready)
			}
		}
		return
	}
	c := h.chans[channel]
	if c == nil {
		return
	}
	for w := range c.watchers {
		w.notify()
	}
}

func (h *hub) signalAll(ps *redis.PubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ps != ps {
		return
	}
	for _, c := range h.chans {
		for w := range c.watchers {
			w.notify()
		}
	}
}

// hubs are the hubs of a store on a cluster client, one per master. A
// run's end is published by the script that ends it, on the master of the
// run's shard; a subscriber on another node hears it only once the cluster
// bus has carried it there, which takes tens of milliseconds at times. So
// RunWait watches its run's channel through the hub of that master, whose
// connection goes there (watch subscribes before it receives).
type hubs struct {
	mu     sync.Mutex
	byAddr map[string]*hub
}

// runHub returns the hub to watch a run's channel on: on a cluster client
// the hub of the master serving the channel's slot, else the store's one
// hub.
func (s *Store) runHub(ctx context.Context, channel string) *hub {
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok {
		return s.hub
	}
	node, err := cc.MasterForKey(ctx, channel)
	if err != nil {
		return s.hub // any node hears every PUBLISH, later
	}
	addr := node.Options().Addr
	s.runHubs.mu.Lock()
	defer s.runHubs.mu.Unlock()
	h := s.runHubs.byAddr[addr]
	if h == nil {
		if s.runHubs.byAddr == nil {
			s.runHubs.byAddr = map[string]*hub{}
		}
		h = newHub(s.client)
		s.runHubs.byAddr[addr] = h
	}
	return h
}

func (w *watcher) notify() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}
