package plait

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

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

// NodeRecord is what the store keeps of one process: see
// [store.NodeRecord].
type NodeRecord = store.NodeRecord

// SplitWorker splits a worker as records carry it into the worker and the
// node id: see [store.SplitWorker].
func SplitWorker(recorded string) (worker, node string) { return store.SplitWorker(recorded) }

// Node option defaults. README, tests and code cite these names.
const (
	// NodeHeartbeatDefault is how often a running Scheduler refreshes its
	// node record and reads the fleet's control flags: the longest a pause,
	// a resume or a drain takes to reach it.
	NodeHeartbeatDefault = 2 * time.Second
	// NodeTTLHeartbeats is how many heartbeat intervals a node record lives
	// without a heartbeat, unless WithNodeTTL says otherwise.
	NodeTTLHeartbeats = 3
	// NodeHistoryDefault is how many recent attempts a node's record keeps.
	NodeHistoryDefault = 100
	// NodeHistoryMax bounds WithNodeHistory.
	NodeHistoryMax = 10000
)

// nodeConfig holds the node settings. A zero nodeConfig means all defaults.
type nodeConfig struct {
	// heartbeat is the heartbeat interval. Zero until given.
	heartbeat time.Duration
	// ttl is how long the record lives without a heartbeat. Zero until
	// given.
	ttl time.Duration
	// history caps the record's history. Zero until given.
	history int
}

// withDefaults fills the node settings no option gave.
func (c *nodeConfig) withDefaults() {
	if c.heartbeat == 0 {
		c.heartbeat = NodeHeartbeatDefault
		if c.ttl != 0 && c.ttl/NodeTTLHeartbeats < c.heartbeat {
			c.heartbeat = max(c.ttl/NodeTTLHeartbeats, IntervalMin)
		}
	}
	if c.ttl == 0 {
		c.ttl = NodeTTLHeartbeats * c.heartbeat
	}
	if c.history == 0 {
		c.history = NodeHistoryDefault
	}
}

// validate reports settings that contradict each other once defaults are
// filled.
func (c *nodeConfig) validate(cfg *config) {
	if c.ttl <= c.heartbeat {
		cfg.reject("WithNodeTTL", c.ttl.String(), "must be longer than the heartbeat interval ("+c.heartbeat.String()+"), or every node expires between two heartbeats")
	}
}

// WithNodeHeartbeat sets how often Run refreshes this process's node record
// and reads the fleet's control flags (drain, paused queues): the longest a
// pause, a resume or a drain takes to reach this process. Defaults to
// NodeHeartbeatDefault, or to a third of WithNodeTTL when that is shorter.
// Below IntervalMin, zero and negative included, is an error.
func WithNodeHeartbeat(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithNodeHeartbeat", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.node.heartbeat = d
	}
}

// WithNodeTTL sets how long this process's node record lives after its
// last heartbeat: how soon a process that died drops out of
// [Scheduler.NodeList]. Defaults to NodeTTLHeartbeats heartbeat intervals. It
// must be longer than the heartbeat interval; below IntervalMin, zero and
// negative included, is an error.
func WithNodeTTL(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithNodeTTL", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.node.ttl = d
	}
}

// WithNodeHistory sets how many recent attempts this process's node record
// keeps. Defaults to NodeHistoryDefault. Zero, negative n and n above
// NodeHistoryMax are errors.
func WithNodeHistory(n int) Option {
	return func(c *config) {
		if n < 1 || n > NodeHistoryMax {
			c.reject("WithNodeHistory", strconv.Itoa(n), "want 1.."+strconv.Itoa(NodeHistoryMax))
			return
		}
		c.node.history = n
	}
}
