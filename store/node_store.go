package store

import (
	"context"
	"time"
)

// NodeStore is the capability of keeping the registry of worker nodes and
// the fleet's control flags. Both shipped stores implement it; the
// [Scheduler]'s node methods answer an [*UnsupportedError] on a store that
// does not, and Run then registers nothing.
//
// Every running Scheduler is one node. It registers and refreshes its
// record with NodeHeartbeat every heartbeat interval; the record lives for
// its TTL past the last heartbeat on the store's clock, so a process that
// dies drops out of [NodeStore.NodeList] by itself, and a graceful stop
// removes it at once with NodeRemove. The store indexes live nodes by
// capability, so the nodes able to run a task that requires `gpu` are found
// without reading the others.
//
// The control flags are the drain flag of each node and the set of paused
// queues, shared by every node. A node reads them from the answer of its
// own heartbeat, never on the claim path: the answer carries the control
// version, a counter every pause and resume bumps, and the paused queues
// only when the version moved past the one the node already knows.
type NodeStore interface {
	// NodeHeartbeat creates the record of params.Node.ID or refreshes it:
	// every field given replaces the stored one, the heartbeat time is the
	// store's clock, the record expires params.TTL from now, and the
	// history entries whose Seq is above the highest one stored are added,
	// newest first, keeping at most params.HistoryLimit. The start time is
	// set when the record is created and kept after. It is idempotent: a
	// retried heartbeat adds no history entry twice.
	NodeHeartbeat(ctx context.Context, params *NodeHeartbeatParams) (*NodeHeartbeatResult, error)
	// NodeRemove deletes the record of a node and its index entries. A
	// node that is not there is no error.
	NodeRemove(ctx context.Context, params *NodeRemoveParams) error
	// NodeGet returns one live node's record, or ErrNotFound when there is
	// none or it expired.
	NodeGet(ctx context.Context, params *NodeGetParams) (*NodeRecord, error)
	// NodeList returns the live nodes, or, with params.Capability set,
	// those that declared that capability, ordered by id.
	NodeList(ctx context.Context, params *NodeListParams) (*NodeListResult, error)
	// NodeDrain sets the drain flag of a live node; the node learns it
	// from its next heartbeat's answer. ErrNotFound when there is no such
	// live node.
	NodeDrain(ctx context.Context, params *NodeDrainParams) error
	// QueuePause pauses params.Queue for every node, or resumes it when
	// params.Resume is set, and bumps the control version when that
	// changed anything. The flag has no expiry.
	QueuePause(ctx context.Context, params *QueuePauseParams) (*QueuePauseResult, error)
	// QueueListPaused returns the paused queues, sorted, and the control
	// version.
	QueueListPaused(ctx context.Context, params *QueueListPausedParams) (*QueueListPausedResult, error)
}

// NodeInfo is what a node reports about itself in each heartbeat.
type NodeInfo struct {
	// ID identifies the node; it follows the id rules and is unique per
	// process (the Scheduler adds a random part to its worker id).
	ID string
	// Name is the worker id of the process; Host and PID say where it
	// runs, Version which plait it runs.
	Name    string
	Host    string
	PID     int
	Version string
	// Capabilities are what the node offers (`gpu`, `region-eu`); Queues
	// the queues it claims from; Handlers the handler names it serves.
	// Each is a set of names following the id rules.
	Capabilities []string
	Queues       []string
	Handlers     []string
	// Capacity is how many handlers it runs at once; Load how many it is
	// running or holds now.
	Capacity int
	Load     int
	// Completed and Failed count the attempts it finished since it
	// started: succeeded ones, and failed ones whether retried or not.
	Completed int64
	Failed    int64
	// Tasks are the attempts it holds now.
	Tasks []NodeTask
	// Draining reports that the node is finishing what it holds and takes
	// nothing new.
	Draining bool
}

// NodeTask is one attempt a node holds or held.
type NodeTask struct {
	// Seq numbers a history entry within its node, from 1, growing; zero
	// for a task held now.
	Seq     int64
	RunID   string
	Task    string
	Attempt int
	// Outcome is how the attempt ended, empty for a task held now.
	Outcome Outcome
	// StartedAt is when the node took it and EndedAt when it handed its
	// outcome back (zero while held), on the node's clock, to the ms.
	StartedAt time.Time
	EndedAt   time.Time
}

// NodeRecord is a node as the store keeps it.
type NodeRecord struct {
	NodeInfo
	// StartedAt is the store's clock at the node's first heartbeat,
	// HeartbeatAt at its last, and ExpiresAt when the record expires
	// without another.
	StartedAt   time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
	// DrainRequested reports that the node was told to drain; Draining
	// (in NodeInfo) that it acts on it.
	DrainRequested bool
	// History holds the node's recent attempts, newest first.
	History []NodeTask
}

// NodeHeartbeatParams are the arguments of [NodeStore.NodeHeartbeat].
type NodeHeartbeatParams struct {
	Node NodeInfo
	// TTL is how long the record lives without another heartbeat; at
	// least a millisecond.
	TTL time.Duration
	// History are attempts ended since the node's last heartbeat that it
	// knows was stored, oldest first; the store adds those whose Seq is
	// new.
	History []NodeTask
	// HistoryLimit caps the history the store keeps for the node; at
	// least 1.
	HistoryLimit int
	// ControlVersion is the control version the node knows, 0 for none.
	ControlVersion int64
}

// NodeHeartbeatResult is the answer of [NodeStore.NodeHeartbeat].
type NodeHeartbeatResult struct {
	// Drain reports that the node was told to drain.
	Drain bool
	// ControlVersion is the store's control version, 0 before the first
	// pause. When it differs from the one given, or the one given is 0,
	// PausedQueues holds every paused queue, sorted, never nil; otherwise
	// PausedQueues is nil and the node keeps what it knows.
	ControlVersion int64
	PausedQueues   []string
	// Now is the store's clock at the heartbeat.
	Now time.Time
}

// NodeRemoveParams are the arguments of [NodeStore.NodeRemove].
type NodeRemoveParams struct {
	ID string
}

// NodeGetParams are the arguments of [NodeStore.NodeGet].
type NodeGetParams struct {
	ID string
}

// NodeListParams are the arguments of [NodeStore.NodeList].
type NodeListParams struct {
	// Capability, when set, lists only the nodes that declared it.
	Capability string
}

// NodeListResult is the answer of [NodeStore.NodeList].
type NodeListResult struct {
	Nodes []*NodeRecord
}

// NodeDrainParams are the arguments of [NodeStore.NodeDrain].
type NodeDrainParams struct {
	ID string
}

// QueuePauseParams are the arguments of [NodeStore.QueuePause].
type QueuePauseParams struct {
	Queue string
	// Resume resumes the queue instead of pausing it.
	Resume bool
}

// QueuePauseResult is the answer of [NodeStore.QueuePause].
type QueuePauseResult struct {
	// Changed reports that the queue was not already in the state asked.
	Changed bool
	// ControlVersion is the control version after the call.
	ControlVersion int64
}

// QueueListPausedParams are the arguments of [NodeStore.QueueListPaused]. It has
// no field yet; it exists so fields can be added.
type QueueListPausedParams struct{}

// QueueListPausedResult is the answer of [NodeStore.QueueListPaused].
type QueueListPausedResult struct {
	Queues         []string
	ControlVersion int64
}

// SplitWorker reads the worker a store recorded for a claim: a Scheduler
// claims under its node id ([Scheduler.NodeID]: its worker id, a dot and 8
// hex digits of its own), so a record names both the process's worker id
// and its node. It answers the worker id and the node id, or recorded and
// "" when recorded is not a node id (a claim made with a plain worker id).
// Stores use it where they answer what they recorded.
func SplitWorker(recorded string) (worker, node string) {
	const suffix = 9 // "." and 8 hex digits
	n := len(recorded)
	if n <= suffix || recorded[n-suffix] != '.' {
		return recorded, ""
	}
	for i := n - suffix + 1; i < n; i++ {
		c := recorded[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return recorded, ""
		}
	}
	return recorded[:n-suffix], recorded
}
