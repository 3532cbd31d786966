package plait

import (
	"strconv"
	"time"
)

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
