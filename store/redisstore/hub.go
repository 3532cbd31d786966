package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// hub shares one pub/sub connection among every waiter of a Store: event
// readers and RunWait callers, all on the events channel <prefix>:ev. The
// connection is opened by the first watcher and closed when the last one
// leaves, so an idle store holds none. A channel is subscribed while at
// least one watcher wants it. A script's message there names the runs the
// call ended ("e" then " <run> <status letter>" per run, flush_events in
// lua/lib_buffers.lua): a RunWait watcher is told of the messages that
// name its run, an event reader of every message. A message of another
// form (the "1" of a plait before runs were named, whose RunWait
// subscribed to a channel per run) may stand for any end: every watcher
// is told.
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
	// client makes the connection; nil for a hub that makes its own
	// client from opts with its connection and closes it with it.
	client redis.UniversalClient
	opts   *redis.Options
	own    *redis.Client

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
	// runs indexes the watchers that wait for one run's end by the run.
	runs map[string]map[*watcher]struct{}
	// confirmed reports that the server confirmed the subscription since
	// it was last sent; ready watchers wait for it.
	confirmed bool
}

// watcher is one wait on one channel.
type watcher struct {
	h       *hub
	channel string
	// run is the run whose end the watcher waits for: it is told only of
	// the messages that name it (or may stand for any end); "" for every
	// message.
	run string
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

// watch starts a wait on channel for every message, or with run set for
// the messages that name the run's end. The caller must call stop when
// done.
func (h *hub) watch(ctx context.Context, channel, run string) (*watcher, error) {
	w := &watcher{h: h, channel: channel, run: run, ready: make(chan struct{}), signal: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	start := h.ps == nil
	if start {
		client := h.client
		if client == nil {
			h.own = redis.NewClient(h.opts)
			client = h.own
		}
		h.ps = client.Subscribe(context.WithoutCancel(ctx))
		h.done = make(chan struct{})
	}
	c := h.chans[channel]
	if c == nil {
		c = &hubChan{watchers: map[*watcher]struct{}{}, runs: map[string]map[*watcher]struct{}{}}
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
	if run != "" {
		ws := c.runs[run]
		if ws == nil {
			ws = map[*watcher]struct{}{}
			c.runs[run] = ws
		}
		ws[w] = struct{}{}
	}
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
	if ws := c.runs[w.run]; ws != nil {
		delete(ws, w)
		if len(ws) == 0 {
			delete(c.runs, w.run)
		}
	}
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
	if h.own != nil {
		_ = h.own.Close()
		h.own = nil
	}
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
			h.route(ps, m.Channel, m.Payload)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				// a first subscription, or one sent again after a reconnect:
				// whatever was published in between is unknown.
				h.subscribed(ps, m.Channel)
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

// subscribed takes the server's confirmation of a subscription to
// channel: the one a watch sent makes the channel's watchers ready; one
// sent again after a reconnect tells every watcher of the channel, since
// what was published while the connection was down is unknown.
func (h *hub) subscribed(ps *redis.PubSub, channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ps != ps {
		return
	}
	if h.unpendLocked(channel) {
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

// route tells the watchers of channel of a message: those of every
// message and those of the runs it names, or every watcher when the
// message is not of the form that names runs (eachEnded).
func (h *hub) route(ps *redis.PubSub, channel, payload string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ps != ps {
		return
	}
	c := h.chans[channel]
	if c == nil {
		return
	}
	if len(c.runs) == 0 {
		for w := range c.watchers {
			w.notify()
		}
		return
	}
	named := eachEnded(payload, func(run string) {
		for w := range c.runs[run] {
			w.notify()
		}
	})
	for w := range c.watchers {
		if w.run == "" || !named {
			w.notify()
		}
	}
}

// eachEnded calls f with each run a message of the events channel names
// as ended ("e", then " <run> <status letter>" per run) and reports
// whether the message has that form; f may have been called for a first
// part of a message that does not.
func eachEnded(payload string, f func(run string)) bool {
	rest, ok := strings.CutPrefix(payload, "e")
	if !ok {
		return false
	}
	for rest != "" {
		if rest[0] != ' ' {
			return false
		}
		run, tail, ok := strings.Cut(rest[1:], " ")
		if !ok || run == "" || tail == "" || tail[0] == ' ' {
			return false
		}
		f(run)
		rest = ""
		if i := strings.IndexByte(tail, ' '); i >= 0 {
			rest = tail[i:]
		}
	}
	return true
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
// RunWait watches the events channel through the hub of that master, whose
// connection goes there: a client of its own to the master's address (a
// cluster client subscribes to a channel on the master of the channel's
// slot, the same for every shard). If that master fails over, its old
// address still hears every PUBLISH, by the bus, as long as it is up; if
// it is gone, every failed receive tells the watchers to read again, up to
// once a second, until the hub is idle and the next wait finds the new
// master.
type hubs struct {
	mu     sync.Mutex
	byAddr map[string]*hub
}

// runHub returns the hub to wait for the end of a run of shard on: on a
// cluster client the hub of the master serving the shard's slot, else the
// store's one hub.
func (s *Store) runHub(ctx context.Context, shard int) *hub {
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok {
		return s.hub
	}
	node, err := cc.MasterForKey(ctx, s.keys.base(shard))
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
		opts := *node.Options()
		if m := opts.MaintNotificationsConfig; m != nil {
			c := *m // the node client's own, not to be shared
			opts.MaintNotificationsConfig = &c
		}
		h = &hub{opts: &opts, chans: map[string]*hubChan{}, pending: map[string]int{}}
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
