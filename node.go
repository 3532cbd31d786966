package plait

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/plaitdag/plait/store"
)

// The node service. Every process running Run is one node of the fleet: a
// loop beside the workers, on the scheduler's clock, sends a heartbeat
// every WithNodeHeartbeat with what the process serves and holds, and
// acts on the answer: the paused queues (claimers stop asking for them,
// at no cost per claim) and a drain request (Run stops taking work,
// finishes what it holds and returns). A graceful stop removes the record;
// a process that dies leaves it to expire.

// newNodeID names one process's node: its worker id and a random part,
// so two processes given the same worker id are still two nodes.
func newNodeID(workerID string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	if len(workerID) > 100 {
		workerID = workerID[:100]
	}
	return workerID + "." + hex.EncodeToString(b[:])
}

// libraryVersion is the version of this module in the binary's build
// information, "(devel)" when it has none.
var libraryVersion = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	const path = "github.com/plaitdag/plait"
	if info.Main.Path == path {
		return info.Main.Version
	}
	for _, m := range info.Deps {
		if m.Path == path {
			return m.Version
		}
	}
	return "(devel)"
})

// NodeID returns the id this scheduler's node has in the store's registry
// while Run runs, as [Scheduler.NodeList] lists it and [Scheduler.NodeDrain]
// takes it. It is the worker id with a random part, fixed by New.
func (s *Scheduler) NodeID() string { return s.nodeID }

func (s *Scheduler) nodeStore() (store.NodeStore, error) {
	return capability[store.NodeStore](s.store, "NodeStore")
}

// NodeList lists the live nodes of the fleet, ordered by id. It returns an
// [*UnsupportedError] when the store does not implement [NodeStore].
func (s *Scheduler) NodeList(ctx context.Context) ([]*NodeRecord, error) {
	return s.NodeListByCapability(ctx, "")
}

// NodeListByCapability lists the live nodes that declared capability (see
// [WithCapabilities]), ordered by id; an empty capability lists them all.
// It reads the store's index by capability, not every node.
func (s *Scheduler) NodeListByCapability(ctx context.Context, capability string) ([]*NodeRecord, error) {
	ns, err := s.nodeStore()
	if err != nil {
		return nil, err
	}
	res, err := ns.NodeList(ctx, &store.NodeListParams{Capability: capability})
	if err != nil {
		return nil, err
	}
	return res.Nodes, nil
}

// NodeGet returns one live node, or an error matching [ErrNotFound].
func (s *Scheduler) NodeGet(ctx context.Context, id string) (*NodeRecord, error) {
	ns, err := s.nodeStore()
	if err != nil {
		return nil, err
	}
	return ns.NodeGet(ctx, &store.NodeGetParams{ID: id})
}

// NodeDrain tells the node id, in this process or any other on the same store,
// to stop taking work, finish what it holds (within its shutdown timeout,
// as when its context ends) and leave Run, which then returns nil. The
// node learns it at its next heartbeat. It returns an error matching
// [ErrNotFound] when there is no such live node.
func (s *Scheduler) NodeDrain(ctx context.Context, id string) error {
	ns, err := s.nodeStore()
	if err != nil {
		return err
	}
	return ns.NodeDrain(ctx, &store.NodeDrainParams{ID: id})
}

// node is the node service of one Run.
type node struct {
	s    *Scheduler
	ns   store.NodeStore
	pool *pool
	// drain ends Run's claiming, as its context ending would.
	drain context.CancelFunc

	mu sync.Mutex
	// pending are attempts ended since the last heartbeat the store
	// answered, oldest first, at most the history limit.
	pending []store.NodeTask
	seq     int64
	// completed and failed count the attempts ended here.
	completed, failed int64
	// version is the control version this node knows.
	version int64
	// draining is set once the node acts on a drain request.
	draining atomic.Bool
	// beats counts the heartbeats the store answered.
	beats atomic.Int64
}

// startNode runs the node service beside Run's workers, when the store
// keeps nodes. The service stops when stop is called, after the workers:
// until then it keeps reporting what the stopping process still holds.
func (s *Scheduler) startNode(ctx context.Context, p *pool, drain context.CancelFunc) (stop func()) {
	ns, err := s.nodeStore()
	if err != nil {
		return func() {}
	}
	n := &node{s: s, ns: ns, pool: p, drain: drain}
	p.node = n
	loop, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.loop(loop)
	}()
	return func() {
		cancel()
		// The removal shares the shutdown deadline of the engine's last
		// writes; a store call that hangs is not waited for past it.
		deadline := s.cfg.clock.Now().Add(shutdownLoopWait)
		if stopBy := p.stopBy.Load(); stopBy != nil {
			deadline = maxTime(*stopBy, deadline)
		}
		t := s.cfg.clock.NewTimer(deadline.Sub(s.cfg.clock.Now()))
		defer t.Stop()
		select {
		case <-done:
		case <-t.C():
			s.cfg.logger.Warn("plait: node service still waiting for the store; Run returns without it", "node", s.nodeID)
		}
	}
}

func (n *node) loop(ctx context.Context) {
	clk := n.s.cfg.clock
	for {
		n.beat(ctx)
		t := clk.NewTimer(n.s.cfg.node.heartbeat)
		select {
		case <-ctx.Done():
			t.Stop()
			// The record is removed under a short deadline of its own; if
			// the store does not answer, it expires by itself.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWriteWindow)
			err := n.ns.NodeRemove(rctx, &store.NodeRemoveParams{ID: n.s.nodeID})
			cancel()
			if err != nil {
				n.s.cfg.logger.Warn("plait: node record not removed; it expires by itself", "node", n.s.nodeID, "err", err)
			}
			return
		case <-t.C():
		}
	}
}

// finished records an attempt this node handed back.
func (n *node) finished(e *execution, o Outcome) {
	if o == OutcomeReturned {
		return
	}
	end := n.s.cfg.clock.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	switch o {
	case OutcomeSucceeded:
		n.completed++
	case OutcomeFailed, OutcomeRetry:
		n.failed++
	}
	n.seq++
	n.pending = append(n.pending, store.NodeTask{Seq: n.seq, RunID: e.ct.Lease.RunID, Task: e.ct.Spec.Name, Attempt: e.ct.Attempt,
		Outcome: o, StartedAt: e.heldSince, EndedAt: end})
	// The oldest beyond the cap go in one copy once twice the cap has
	// piled up: the buffer is reused instead of regrown at every attempt.
	if h := n.s.cfg.node.history; len(n.pending) >= 2*h {
		n.pending = append(n.pending[:0], n.pending[len(n.pending)-h:]...)
	}
}

// recent returns the pending attempts the record may hold: the last
// history of them.
func (n *node) recent() []store.NodeTask {
	return n.pending[max(0, len(n.pending)-n.s.cfg.node.history):]
}

// info is what the node reports now.
func (n *node) info() (store.NodeInfo, []store.NodeTask, int64) {
	s := n.s
	host, _ := os.Hostname()
	info := store.NodeInfo{
		ID: s.nodeID, Name: s.cfg.workerID, Host: host, PID: os.Getpid(), Version: libraryVersion(),
		Capabilities: s.cfg.capabilities, Queues: s.cfg.queues, Capacity: s.cfg.concurrency,
		Draining: n.draining.Load() || n.pool.stopping.Load(),
	}
	s.mu.RLock()
	for name := range s.handlers {
		info.Handlers = append(info.Handlers, name)
	}
	s.mu.RUnlock()
	sort.Strings(info.Handlers)
	for _, e := range n.pool.snapshot() {
		info.Tasks = append(info.Tasks, store.NodeTask{RunID: e.ct.Lease.RunID, Task: e.ct.Spec.Name, Attempt: e.ct.Attempt, StartedAt: e.heldSince})
	}
	sort.Slice(info.Tasks, func(i, j int) bool { return info.Tasks[i].StartedAt.Before(info.Tasks[j].StartedAt) })
	info.Load = len(info.Tasks)
	n.mu.Lock()
	defer n.mu.Unlock()
	info.Completed, info.Failed = n.completed, n.failed
	return info, append([]store.NodeTask(nil), n.recent()...), n.version
}

// beat sends one heartbeat and acts on its answer.
func (n *node) beat(ctx context.Context) {
	info, hist, version := n.info()
	// A heartbeat cannot usefully outlast the record it refreshes.
	bctx, cancel := context.WithTimeout(ctx, n.s.cfg.node.ttl)
	res, err := n.ns.NodeHeartbeat(bctx, &store.NodeHeartbeatParams{Node: info, TTL: n.s.cfg.node.ttl, History: hist,
		HistoryLimit: n.s.cfg.node.history, ControlVersion: version})
	cancel()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			n.s.cfg.logger.Warn("plait: node heartbeat failed", "node", n.s.nodeID, "err", err)
		}
		return
	}
	n.mu.Lock()
	if len(hist) > 0 {
		// Drop what the store now holds; entries may have been trimmed
		// from the front meanwhile.
		top := hist[len(hist)-1].Seq
		i := 0
		for i < len(n.pending) && n.pending[i].Seq <= top {
			i++
		}
		n.pending = append(n.pending[:0], n.pending[i:]...)
	}
	n.version = res.ControlVersion
	n.mu.Unlock()
	if res.PausedQueues != nil {
		n.pool.setPaused(res.PausedQueues)
	}
	n.beats.Add(1)
	n.s.emit(Event{Type: EventNodeHeartbeat, Node: n.s.nodeID})
	if res.Drain && n.draining.CompareAndSwap(false, true) {
		n.s.cfg.logger.Info("plait: node told to drain: taking no more work, finishing what it holds", "node", n.s.nodeID)
		n.s.emit(Event{Type: EventNodeDraining, Node: n.s.nodeID})
		n.drain()
	}
}

// activeQueues are the queues a claim asks for now: the pool's queues
// (routed ones included) less the paused ones.
func (p *pool) activeQueues() []string {
	if q := p.active.Load(); q != nil {
		return *q
	}
	return p.queues
}

// setPaused takes the fleet's paused queues from a heartbeat and, when a
// queue came back, wakes the driver to claim at once. Pausing a queue
// pauses its routed queues too: they hold its tasks that require
// capabilities.
func (p *pool) setPaused(paused []string) {
	off := make(map[string]bool, len(paused))
	for _, q := range paused {
		off[q] = true
	}
	active := make([]string, 0, len(p.queues))
	for _, q := range p.queues {
		base, _, _ := store.SplitRoutedQueue(q)
		if !off[q] && !off[base] {
			active = append(active, q)
		}
	}
	old := p.activeQueues()
	p.active.Store(&active)
	if len(active) > len(old) {
		p.wake()
	}
}

// NodeRecord is what the store keeps of one process: see
// [store.NodeRecord].
type NodeRecord = store.NodeRecord

// SplitWorker splits a worker as records carry it into the worker and the
// node id: see [store.SplitWorker].
func SplitWorker(recorded string) (worker, node string) { return store.SplitWorker(recorded) }
