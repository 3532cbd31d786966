package memstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// nodes is the store's side of [store.NodeStore]: the node records by id,
// each with its expiry, and the fleet's paused queues with the control
// version. A record past its expiry is invisible and dropped by the next
// heartbeat of any node; the capability index of the Redis store is a scan
// here, over few enough nodes for that to be cheap.
type nodes struct {
	byID    map[string]*store.NodeRecord
	paused  map[string]bool
	version int64
}

func checkNodeID(id string) error {
	if err := ids.Check(id); err != nil {
		return fmt.Errorf("memstore: node id %s %v: %w", ids.Quote(id), err, store.ErrInvalidArgument)
	}
	return nil
}

// copyNode returns a copy of a record the caller may keep.
func copyNode(r *store.NodeRecord) *store.NodeRecord {
	c := *r
	c.Capabilities = append([]string(nil), r.Capabilities...)
	c.Queues = append([]string(nil), r.Queues...)
	c.Handlers = append([]string(nil), r.Handlers...)
	c.Tasks = append([]store.NodeTask(nil), r.Tasks...)
	c.History = append([]store.NodeTask(nil), r.History...)
	return &c
}

// liveNodeLocked returns the record of id when it has not expired.
func (s *Store) liveNodeLocked(id string, now time.Time) *store.NodeRecord {
	r := s.nodes.byID[id]
	if r == nil || !now.Before(r.ExpiresAt) {
		return nil
	}
	return r
}

// msTask cuts a task's times to the ms, as the Redis store keeps them.
func msTask(t store.NodeTask) store.NodeTask {
	t.StartedAt, t.EndedAt = ms(t.StartedAt), ms(t.EndedAt)
	return t
}

// NodeHeartbeat registers or refreshes a node. See
// [store.NodeStore.NodeHeartbeat].
func (s *Store) NodeHeartbeat(ctx context.Context, params *store.NodeHeartbeatParams) (*store.NodeHeartbeatResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkNodeID(params.Node.ID); err != nil {
		return nil, err
	}
	if params.TTL < time.Millisecond || params.HistoryLimit < 1 {
		return nil, fmt.Errorf("memstore: node heartbeat needs a TTL of at least 1ms and a history limit of at least 1: %w", store.ErrInvalidArgument)
	}
	for _, set := range [][]string{params.Node.Capabilities, params.Node.Queues, params.Node.Handlers} {
		for _, n := range set {
			if err := ids.Check(n); err != nil {
				return nil, fmt.Errorf("memstore: node %s reports the name %s, which %v: %w", ids.Quote(params.Node.ID), ids.Quote(n), err, store.ErrInvalidArgument)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.nodes.byID == nil {
		s.nodes.byID = map[string]*store.NodeRecord{}
	}
	for id, r := range s.nodes.byID {
		if !now.Before(r.ExpiresAt) {
			delete(s.nodes.byID, id)
		}
	}
	old := s.nodes.byID[params.Node.ID]
	r := &store.NodeRecord{NodeInfo: params.Node, StartedAt: now}
	if old != nil {
		r.StartedAt, r.DrainRequested, r.History = old.StartedAt, old.DrainRequested, old.History
	}
	r.Tasks = nil
	for _, t := range params.Node.Tasks {
		r.Tasks = append(r.Tasks, msTask(t))
	}
	r.HeartbeatAt = now
	r.ExpiresAt = now.Add(ceilDur(params.TTL))
	var top int64
	if len(r.History) > 0 {
		top = r.History[0].Seq
	}
	hist := append([]store.NodeTask(nil), r.History...)
	for _, t := range params.History {
		if t.Seq > top {
			hist = append([]store.NodeTask{msTask(t)}, hist...)
			top = t.Seq
		}
	}
	if len(hist) > params.HistoryLimit {
		hist = hist[:params.HistoryLimit]
	}
	r.History = hist
	s.nodes.byID[r.ID] = copyNode(r)
	res := &store.NodeHeartbeatResult{Drain: r.DrainRequested, ControlVersion: s.nodes.version, Now: now}
	if params.ControlVersion != s.nodes.version || params.ControlVersion == 0 {
		res.PausedQueues = s.pausedLocked()
	}
	return res, nil
}

// pausedLocked returns the paused queues, sorted, never nil.
func (s *Store) pausedLocked() []string {
	out := []string{}
	for q := range s.nodes.paused {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// NodeRemove deletes a node's record. See [store.NodeStore.NodeRemove].
func (s *Store) NodeRemove(ctx context.Context, params *store.NodeRemoveParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes.byID, params.ID)
	return nil
}

// NodeGet returns one live node. See [store.NodeStore.NodeGet].
func (s *Store) NodeGet(_ context.Context, params *store.NodeGetParams) (*store.NodeRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveNodeLocked(params.ID, s.now())
	if r == nil {
		return nil, fmt.Errorf("memstore: node %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	return copyNode(r), nil
}

// NodeList lists live nodes, by capability when asked. See
// [store.NodeStore.NodeList].
func (s *Store) NodeList(_ context.Context, params *store.NodeListParams) (*store.NodeListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	res := &store.NodeListResult{}
	for id := range s.nodes.byID {
		r := s.liveNodeLocked(id, now)
		if r == nil || (params.Capability != "" && !has(r.Capabilities, params.Capability)) {
			continue
		}
		res.Nodes = append(res.Nodes, copyNode(r))
	}
	sort.Slice(res.Nodes, func(i, j int) bool { return res.Nodes[i].ID < res.Nodes[j].ID })
	return res, nil
}

func has(set []string, name string) bool {
	for _, v := range set {
		if v == name {
			return true
		}
	}
	return false
}

// NodeDrain tells a live node to drain. See [store.NodeStore.NodeDrain].
func (s *Store) NodeDrain(ctx context.Context, params *store.NodeDrainParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveNodeLocked(params.ID, s.now())
	if r == nil {
		return fmt.Errorf("memstore: node %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	r.DrainRequested = true
	return nil
}

// QueuePause pauses or resumes a queue for every node. See
// [store.NodeStore.QueuePause].
func (s *Store) QueuePause(ctx context.Context, params *store.QueuePauseParams) (*store.QueuePauseResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ids.Check(params.Queue); err != nil {
		return nil, fmt.Errorf("memstore: queue %s %v: %w", ids.Quote(params.Queue), err, store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &store.QueuePauseResult{}
	if s.nodes.paused[params.Queue] == params.Resume {
		if s.nodes.paused == nil {
			s.nodes.paused = map[string]bool{}
		}
		if params.Resume {
			delete(s.nodes.paused, params.Queue)
		} else {
			s.nodes.paused[params.Queue] = true
		}
		s.nodes.version++
		res.Changed = true
	}
	res.ControlVersion = s.nodes.version
	return res, nil
}

// QueueListPaused lists the paused queues. See [store.NodeStore.QueueListPaused].
func (s *Store) QueueListPaused(context.Context, *store.QueueListPausedParams) (*store.QueueListPausedResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &store.QueueListPausedResult{Queues: s.pausedLocked(), ControlVersion: s.nodes.version}, nil
}
