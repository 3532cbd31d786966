package plait_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plaitdag/plait"
)

// callCounter is a Store that counts the calls in flight through it, the
// blocking waits (RunWait, ReadyWait) aside, so a test can move its fake
// clock only while no call is on its way.
type callCounter struct {
	plait.Store
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero
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

func (c *callCounter) RunCreate(ctx context.Context, p *plait.RunCreateParams) (*plait.RunCreateResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCreate(ctx, p)
}

func (c *callCounter) RunCreateMany(ctx context.Context, p []*plait.RunCreateParams) ([]plait.RunCreateOutcome, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCreateMany(ctx, p)
}

func (c *callCounter) RunGet(ctx context.Context, p *plait.RunGetParams) (*plait.Run, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunGet(ctx, p)
}

func (c *callCounter) RunCancel(ctx context.Context, p *plait.RunCancelParams) (*plait.Run, error) {
	c.enter()
	defer c.leave()
	return c.Store.RunCancel(ctx, p)
}

func (c *callCounter) TaskClaim(ctx context.Context, p *plait.TaskClaimParams) (*plait.TaskClaimResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskClaim(ctx, p)
}

func (c *callCounter) TaskFinish(ctx context.Context, p *plait.TaskFinishParams) ([]plait.TaskFinishResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskFinish(ctx, p)
}

func (c *callCounter) TaskFinishClaim(ctx context.Context, p *plait.TaskFinishClaimParams) (*plait.TaskFinishClaimResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.TaskFinishClaim(ctx, p)
}

func (c *callCounter) LeaseExtend(ctx context.Context, p *plait.LeaseExtendParams) ([]plait.LeaseExtendResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.LeaseExtend(ctx, p)
}

func (c *callCounter) LeaseSweep(ctx context.Context, p *plait.LeaseSweepParams) (*plait.LeaseSweepResult, error) {
	c.enter()
	defer c.leave()
	return c.Store.LeaseSweep(ctx, p)
}

// StorePing forwards the Pinger capability of the store under it.
func (c *callCounter) StorePing(ctx context.Context, p *plait.StorePingParams) (*plait.StorePingResult, error) {
	pinger, ok := c.Store.(plait.Pinger)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "Pinger"}
	}
	c.enter()
	defer c.leave()
	return pinger.StorePing(ctx, p)
}

// QueueDepth forwards the QueueDepther capability of the store under it.
func (c *callCounter) QueueDepth(ctx context.Context, p *plait.QueueDepthParams) (*plait.QueueDepthResult, error) {
	qd, ok := c.Store.(plait.QueueDepther)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "QueueDepther"}
	}
	c.enter()
	defer c.leave()
	return qd.QueueDepth(ctx, p)
}
