package worker

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

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

// node is the node service of one Run.
type node struct {
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

func (n *node) loop(ctx context.Context) {
	clk := n.pool.cfg.Clock
	for {
		n.beat(ctx)
		t := clk.NewTimer(n.pool.cfg.NodeHeartbeat)
		select {
		case <-ctx.Done():
			t.Stop()
			// The record is removed under a short deadline of its own; if
			// the store does not answer, it expires by itself.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownWriteWindow)
			err := n.ns.NodeRemove(rctx, &store.NodeRemoveParams{ID: n.pool.cfg.NodeID})
			cancel()
			if err != nil {
				n.pool.cfg.Logger.Warn("plait: node record not removed; it expires by itself", "node", n.pool.cfg.NodeID, "err", err)
			}
			return
		case <-t.C():
		}
	}
}

// finished records an attempt this node handed back, ended at end.
func (n *node) finished(e *Attempt, o store.Outcome, end time.Time) {
	if o == store.OutcomeReturned {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch o {
	case store.OutcomeSucceeded:
		n.completed++
	case store.OutcomeFailed, store.OutcomeRetry:
		n.failed++
	}
	n.seq++
	n.pending = append(n.pending, store.NodeTask{Seq: n.seq, RunID: e.ct.Lease.RunID, Task: e.ct.Spec.Name, Attempt: e.ct.Attempt,
		Outcome: o, StartedAt: e.heldSince, EndedAt: end})
	// The oldest beyond the cap go in one copy once twice the cap has
	// piled up: the buffer is reused instead of regrown at every attempt.
	if h := n.pool.cfg.NodeHistory; len(n.pending) >= 2*h {
		n.pending = append(n.pending[:0], n.pending[len(n.pending)-h:]...)
	}
}

// recent returns the pending attempts the record may hold: the last
// history of them.
func (n *node) recent() []store.NodeTask {
	return n.pending[max(0, len(n.pending)-n.pool.cfg.NodeHistory):]
}

// info is what the node reports now.
func (n *node) info() (store.NodeInfo, []store.NodeTask, int64) {
	cfg := n.pool.cfg
	host, _ := os.Hostname()
	info := store.NodeInfo{
		ID: cfg.NodeID, Name: cfg.WorkerID, Host: host, PID: os.Getpid(), Version: libraryVersion(),
		Capabilities: cfg.Capabilities, Queues: cfg.Queues, Capacity: cfg.Concurrency,
		Draining: n.draining.Load() || n.pool.stopping.Load(),
	}
	if cfg.HandlerNames != nil {
		info.Handlers = append(info.Handlers, cfg.HandlerNames()...)
	}
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
	bctx, cancel := context.WithTimeout(ctx, n.pool.cfg.NodeTTL)
	res, err := n.ns.NodeHeartbeat(bctx, &store.NodeHeartbeatParams{Node: info, TTL: n.pool.cfg.NodeTTL, History: hist,
		HistoryLimit: n.pool.cfg.NodeHistory, ControlVersion: version})
	cancel()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			n.pool.cfg.Logger.Warn("plait: node heartbeat failed", "node", n.pool.cfg.NodeID, "err", err)
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
	n.pool.emit(Event{Type: EventNodeHeartbeat, Node: n.pool.cfg.NodeID})
	if res.Drain && n.draining.CompareAndSwap(false, true) {
		n.pool.cfg.Logger.Info("plait: node told to drain: taking no more work, finishing what it holds", "node", n.pool.cfg.NodeID)
		n.pool.emit(Event{Type: EventNodeDraining, Node: n.pool.cfg.NodeID})
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

// startNode runs the node service beside Run's workers, when the store
// keeps nodes. The service stops when stop is called, after the workers:
// until then it keeps reporting what the stopping process still holds.
func (p *pool) startNode(ctx context.Context, drain context.CancelFunc) (stop func()) {
	ns, ok := p.store.(store.NodeStore)
	if !ok {
		return func() {}
	}
	n := &node{ns: ns, pool: p, drain: drain}
	p.node = n
	loop, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.loop(loop)
	}()
	clk := p.cfg.Clock
	return func() {
		cancel()
		// The removal shares the shutdown deadline of the engine's last
		// writes; a store call that hangs is not waited for past it.
		deadline := clk.Now().Add(shutdownLoopWait)
		if stopBy := p.stopBy.Load(); stopBy != nil {
			deadline = maxTime(*stopBy, deadline)
		}
		t := clk.NewTimer(deadline.Sub(clk.Now()))
		defer t.Stop()
		select {
		case <-done:
		case <-t.C():
			p.cfg.Logger.Warn("plait: node service still waiting for the store; Run returns without it", "node", p.cfg.NodeID)
		}
	}
}
