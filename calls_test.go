package plait_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// callCounter is a Store that counts the calls in flight through it, the
// blocking waits (RunWait, ReadyWait) aside, so a test can move its fake
// clock only while no call is on its way.
//
// The Scheduler finds a capability by a type assertion on the store it was
// given, so it sees only the capabilities callCounter declares itself, and
// each of them is a method below that counts its call. The ones left out
// start background services with timers of their own (NodeStore's
// heartbeat, ScheduleStore's leader) or change the claim path (ClaimRouter,
// FairClaimer, Limiter); a test that wants one wraps callCounter in a type
// that adds it, counted the same way (nodeCounter, routedCalls).
type callCounter struct {
	store.Store
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero
	// resultReads counts TaskResults calls.
	resultReads atomic.Int64
}

func (c *callCounter) enter() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *callCounter) leave() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	c.mu.Unlock()
}

// The capabilities callCounter passes through, counted.
var _ interface {
	store.Store
	store.Pinger
	store.QueueDepther
	store.QueryStore
	store.HistoryStore
	store.TaskLogStore
	store.DeadLetterStore
} = (*callCounter)(nil)

// waitIdle blocks until no call is in flight.
func (c *callCounter) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.After(failAfter)
	for {
		c.mu.Lock()
		if c.n == 0 {
			c.mu.Unlock()
			return
		}
		if c.idle == nil {
			c.idle = make(chan struct{})
		}
		ch := c.idle
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("store calls still in flight")
		}
	}
}

func (c *callCounter) RunCreate(ctx context.Context, p *store.RunCreateParams) (*store.RunCreateResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCreate(ctx, p)
}

func (c *callCounter) RunCreateMany(ctx context.Context, p []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCreateMany(ctx, p)
}

func (c *callCounter) RunGet(ctx context.Context, p *store.RunGetParams) (*plait.Run, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunGet(ctx, p)
}

func (c *callCounter) RunCancel(ctx context.Context, p *store.RunCancelParams) (*plait.Run, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCancel(ctx, p)
}

func (c *callCounter) TaskClaim(ctx context.Context, p *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskClaim(ctx, p)
}

func (c *callCounter) TaskFinish(ctx context.Context, p *store.TaskFinishParams) ([]store.TaskFinishResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskFinish(ctx, p)
}

func (c *callCounter) TaskFinishClaim(ctx context.Context, p *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskFinishClaim(ctx, p)
}

func (c *callCounter) LeaseExtend(ctx context.Context, p *store.LeaseExtendParams) ([]store.LeaseExtendResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.LeaseExtend(ctx, p)
}

func (c *callCounter) LeaseSweep(ctx context.Context, p *store.LeaseSweepParams) (*store.LeaseSweepResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.LeaseSweep(ctx, p)
}

// StorePing forwards the Pinger capability of the store under it.
func (c *callCounter) StorePing(ctx context.Context, p *store.StorePingParams) (*store.StorePingResult, error) {
	pinger, ok := c.Store.(store.Pinger)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "Pinger"}
	}
	c.enter()
	defer c.leave()
	return pinger.StorePing(ctx, p)
}

// QueueDepth forwards the QueueDepther capability of the store under it.
func (c *callCounter) QueueDepth(ctx context.Context, p *store.QueueDepthParams) (*store.QueueDepthResult, error) {
	qd, ok := c.Store.(store.QueueDepther)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "QueueDepther"}
	}
	c.enter()
	defer c.leave()
	return qd.QueueDepth(ctx, p)
}

// queryStore returns the QueryStore capability of the store under c.
func (c *callCounter) queryStore() (store.QueryStore, error) {
	qs, ok := c.Store.(store.QueryStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "QueryStore"}
	}
	return qs, nil
}

// forwardQuery runs one QueryStore call on the store under c, counted.
func forwardQuery[R any](c *callCounter, call func(store.QueryStore) (R, error)) (R, error) {
	qs, err := c.queryStore()
	if err != nil {
		var zero R
		return zero, err
	}
	c.enter()
	defer c.leave()
	return call(qs)
}

// RunList and the rest forward the QueryStore capability of the store
// under c.
func (c *callCounter) RunList(ctx context.Context, p *plait.RunListParams) (*plait.RunListResult, error) {
	return forwardQuery(c, func(q store.QueryStore) (*plait.RunListResult, error) { return q.RunList(ctx, p) })
}

func (c *callCounter) RunGetMany(ctx context.Context, p *store.RunGetManyParams) (*store.RunGetManyResult, error) {
	return forwardQuery(c, func(q store.QueryStore) (*store.RunGetManyResult, error) { return q.RunGetMany(ctx, p) })
}

func (c *callCounter) RunCount(ctx context.Context, p *store.RunCountParams) (*store.RunCountResult, error) {
	return forwardQuery(c, func(q store.QueryStore) (*store.RunCountResult, error) { return q.RunCount(ctx, p) })
}

func (c *callCounter) RunDelete(ctx context.Context, p *store.RunDeleteParams) error {
	_, err := forwardQuery(c, func(q store.QueryStore) (struct{}, error) { return struct{}{}, q.RunDelete(ctx, p) })
	return err
}

func (c *callCounter) RunPrune(ctx context.Context, p *store.RunPruneParams) (*store.RunPruneResult, error) {
	return forwardQuery(c, func(q store.QueryStore) (*store.RunPruneResult, error) { return q.RunPrune(ctx, p) })
}

func (c *callCounter) TaskList(ctx context.Context, p *store.TaskListParams) (*store.TaskListResult, error) {
	return forwardQuery(c, func(q store.QueryStore) (*store.TaskListResult, error) { return q.TaskList(ctx, p) })
}

// AttemptHistory forwards the HistoryStore capability of the store under it.
func (c *callCounter) AttemptHistory(ctx context.Context, p *store.AttemptHistoryParams) (*store.AttemptHistoryResult, error) {
	hs, ok := c.Store.(store.HistoryStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "HistoryStore"}
	}
	c.enter()
	defer c.leave()
	return hs.AttemptHistory(ctx, p)
}

// TaskLogAppend forwards the TaskLogStore capability of the store under it.
func (c *callCounter) TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (*store.TaskLogAppendResult, error) {
	ls, ok := c.Store.(store.TaskLogStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "TaskLogStore"}
	}
	c.enter()
	defer c.leave()
	return ls.TaskLogAppend(ctx, p)
}

// TaskLogRead forwards the TaskLogStore capability of the store under it.
func (c *callCounter) TaskLogRead(ctx context.Context, p *store.TaskLogReadParams) (*plait.TaskLogReadResult, error) {
	ls, ok := c.Store.(store.TaskLogStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "TaskLogStore"}
	}
	c.enter()
	defer c.leave()
	return ls.TaskLogRead(ctx, p)
}

// DeadLetterList forwards the DeadLetterStore capability of the store under it.
func (c *callCounter) DeadLetterList(ctx context.Context, p *plait.DeadLetterListParams) (*plait.DeadLetterListResult, error) {
	d, ok := c.Store.(store.DeadLetterStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "DeadLetterStore"}
	}
	c.enter()
	defer c.leave()
	return d.DeadLetterList(ctx, p)
}

// DeadLetterPurge forwards the DeadLetterStore capability of the store under it.
func (c *callCounter) DeadLetterPurge(ctx context.Context, p *store.DeadLetterPurgeParams) (*store.DeadLetterPurgeResult, error) {
	d, ok := c.Store.(store.DeadLetterStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "DeadLetterStore"}
	}
	c.enter()
	defer c.leave()
	return d.DeadLetterPurge(ctx, p)
}

// TaskResults forwards the ResultStore capability of the store under it and
// counts its calls: the parents' results read after a claim left them out.
func (c *callCounter) TaskResults(ctx context.Context, p *store.TaskResultsParams) (*store.TaskResultsResult, error) {
	rs, ok := c.Store.(store.ResultStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "ResultStore"}
	}
	c.resultReads.Add(1)
	c.enter()
	defer c.leave()
	return rs.TaskResults(ctx, p)
}

// TaskPayloads forwards the PayloadStore capability of the store under it.
func (c *callCounter) TaskPayloads(ctx context.Context, p *store.TaskPayloadsParams) (*store.TaskPayloadsResult, error) {
	ps, ok := c.Store.(store.PayloadStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "PayloadStore"}
	}
	c.enter()
	defer c.leave()
	return ps.TaskPayloads(ctx, p)
}
