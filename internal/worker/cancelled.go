package worker

import (
	"sync"
	"time"
)

// cancelledRuns remembers the runs this process saw end early (cancelled,
// or stopped by the stop strategy) for one lease duration. A claim already
// on its way when the run ended returns tasks the store has since
// cancelled; without this memory their handlers would start and run until
// the next heartbeat told them otherwise.
//
// Only a claim sent before the process learned of the end can hold such a
// task: one sent after it that returns a task of the run found the run
// running again (a replay opened its next generation), so the memory
// holds, beside the time, the sequence number of the last claim sent when
// the run was added, and a later claim is left alone.
type cancelledRuns struct {
	mu    sync.Mutex
	ttl   time.Duration
	at    map[string]time.Time
	seqAt map[string]uint64
	order []string // run ids in the order they were added, oldest first
	sent  uint64   // claims sent so far
}

func newCancelledRuns(ttl time.Duration) *cancelledRuns {
	return &cancelledRuns{ttl: ttl, at: map[string]time.Time{}, seqAt: map[string]uint64{}}
}

// add remembers runID from now on and forgets runs older than the ttl.
func (c *cancelledRuns) add(runID string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 {
		oldest := c.order[0]
		if at, ok := c.at[oldest]; ok && now.Sub(at) < c.ttl {
			break
		}
		delete(c.at, oldest)
		delete(c.seqAt, oldest)
		c.order = c.order[1:]
	}
	if _, ok := c.at[runID]; !ok {
		c.order = append(c.order, runID)
	}
	c.at[runID] = now
	c.seqAt[runID] = c.sent
}

// claimSent numbers a claim about to be sent.
func (c *cancelledRuns) claimSent() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent++
	return c.sent
}

// has reports whether runID ended early within the ttl, as far as the
// claim numbered seq (claimSent) can know: a claim sent after the end was
// learned is not concerned.
func (c *cancelledRuns) has(runID string, now time.Time, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[runID]
	return ok && now.Sub(at) < c.ttl && seq <= c.seqAt[runID]
}
