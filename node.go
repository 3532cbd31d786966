package plait

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
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

// NodeGet returns one live node, or an error matching [ErrNotFound] that
// names the live nodes whose id looks like id (see [Scheduler.NodeDrain]).
func (s *Scheduler) NodeGet(ctx context.Context, id string) (*NodeRecord, error) {
	ns, err := s.nodeStore()
	if err != nil {
		return nil, err
	}
	n, err := ns.NodeGet(ctx, &store.NodeGetParams{ID: id})
	if err != nil {
		return nil, nodeNotFound(ctx, ns, id, err)
	}
	return n, nil
}

// NodeDrain tells the node id, in this process or any other on the same store,
// to stop taking work, finish what it holds (within its shutdown timeout,
// as when its context ends) and leave Run, which then returns nil. The
// node learns it at its next heartbeat. It returns an error matching
// [ErrNotFound] when there is no such live node. A node id is a worker id
// and a random part, such as "w1.f601c089" ([Scheduler.NodeID]), so the
// error names the live nodes whose id looks like id (the same worker id,
// or id within theirs, in any case), or says how ids are made when none
// does.
func (s *Scheduler) NodeDrain(ctx context.Context, id string) error {
	ns, err := s.nodeStore()
	if err != nil {
		return err
	}
	return nodeNotFound(ctx, ns, id, ns.NodeDrain(ctx, &store.NodeDrainParams{ID: id}))
}

// lookAlikesMax is how many look-alike nodes a not-found error names.
const lookAlikesMax = 5

// nodeNotFound adds to the store's not-found error for id the live nodes
// whose id looks like it; any other error, or nil, passes as it is.
func nodeNotFound(ctx context.Context, ns store.NodeStore, id string, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	res, lerr := ns.NodeList(ctx, &store.NodeListParams{})
	if lerr != nil {
		return err
	}
	if len(res.Nodes) == 0 {
		return fmt.Errorf("%w; no node is live", err)
	}
	asked, askedWorker := strings.ToLower(id), strings.ToLower(nodeWorker(id))
	var like []string
	for _, n := range res.Nodes {
		if len(like) == lookAlikesMax {
			break
		}
		if id != "" && strings.Contains(strings.ToLower(n.ID), asked) || strings.ToLower(nodeWorker(n.ID)) == askedWorker {
			like = append(like, n.ID)
		}
	}
	if len(like) == 0 {
		return fmt.Errorf("%w; no live node looks like it: a node id is a worker id and a random part, as in %s", err, quote(res.Nodes[0].ID))
	}
	return fmt.Errorf("%w; live nodes like it: %s", err, quoteAll(like))
}

// nodeWorker is the worker id part of a node id ("w1" of "w1.f601c089"),
// or the whole id when it has no random part.
func nodeWorker(id string) string {
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		return id[:i]
	}
	return id
}

// WithHandlerCheck makes Submit and SubmitMany check each task's handler
// against those the live nodes of the fleet register ([NodeRecord].Handlers)
// and refuse, before writing, a task whose handler none registers, with an
// [*UnknownHandlerError] that names the nearest names they do. It acts on
// client calls. Like [WithRemoteHandlers], it lets Submit take handlers
// this process has not registered, but only those a live node serves; a
// handler this process registers passes without a look at the fleet. The
// list of the fleet's handlers is kept and read again at most once a
// second, and at once before a handler it lacks is refused, so a node
// just started is seen; before any node runs, every other handler is
// refused. ScheduleSave and the tasks a schedule fires are not checked.
// The store must implement [NodeStore]: New answers an
// [*UnsupportedError] otherwise.
func WithHandlerCheck() Option { return func(c *config) { c.handlerCheck = true } }

// handlerCheckRefresh is how long WithHandlerCheck keeps the fleet's
// handlers before reading them again.
const handlerCheckRefresh = time.Second

// fleetHandlers keeps the handler names the live nodes register, as last
// read, for WithHandlerCheck.
type fleetHandlers struct {
	// sem lets one caller at a time check and read; the others wait for
	// its answer, or for their context.
	sem    chan struct{}
	names  map[string]bool // nil until read
	sorted []string
	readAt time.Time
}

// checkHandlers answers, under WithHandlerCheck, for each of params (nil
// ones skipped) the tasks whose handler neither this process nor a live
// node registers, joined, or nil; err when the fleet could not be read.
func (s *Scheduler) checkHandlers(ctx context.Context, params []*store.RunCreateParams) (errs []error, err error) {
	if !s.cfg.handlerCheck {
		return nil, nil
	}
	f := &s.fleet
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-f.sem }()
	read := f.names == nil || s.cfg.clock.Now().Sub(f.readAt) >= handlerCheckRefresh
	if read {
		if err := s.readFleet(ctx); err != nil {
			return nil, err
		}
	}
	if errs = s.unknownHandlers(params, read); errs == nil || read {
		return errs, nil
	}
	if err := s.readFleet(ctx); err != nil {
		return nil, err
	}
	return s.unknownHandlers(params, true), nil
}

// readFleet reads the handlers of the live nodes; the caller holds sem.
func (s *Scheduler) readFleet(ctx context.Context) error {
	nodes, err := s.NodeList(ctx)
	if err != nil {
		return fmt.Errorf("plait: WithHandlerCheck: read the live nodes: %w", err)
	}
	f := &s.fleet
	f.names, f.sorted = map[string]bool{}, nil
	for _, n := range nodes {
		for _, h := range n.Handlers {
			if !f.names[h] {
				f.names[h] = true
				f.sorted = append(f.sorted, h)
			}
		}
	}
	sort.Strings(f.sorted)
	f.readAt = s.cfg.clock.Now()
	return nil
}

// unknownHandlers answers one error per params element for the tasks
// whose handler is unknown, or nil when all are known; final names the
// nearest known handlers too. The caller holds sem.
func (s *Scheduler) unknownHandlers(params []*store.RunCreateParams, final bool) []error {
	var out []error
	for i, p := range params {
		if p == nil {
			continue
		}
		var errs []error
		for _, t := range p.Workflow.Tasks {
			if _, ok := s.handler(t.Handler); ok || s.fleet.names[t.Handler] {
				continue
			}
			e := &UnknownHandlerError{Workflow: p.Workflow.Name, Task: t.Name, Handler: t.Handler, Fleet: true}
			if final {
				e.Near = nearest(t.Handler, s.fleet.sorted)
			}
			errs = append(errs, e)
		}
		if len(errs) > 0 {
			if out == nil {
				out = make([]error, len(params))
			}
			out[i] = errors.Join(errs...)
		}
	}
	return out
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
