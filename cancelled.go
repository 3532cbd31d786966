package plait

import (
	"sync"
	"time"
)

// cancelledRuns remembers the runs this process saw end early (cancelled,
// or stopped by the stop strategy) for one lease duration. A claim already
// on its way when the run ended returns tasks the store has since
// cancelled; without this memory their handlers would start and run until
// the next heartbeat told them otherwise.
type cancelledRuns struct {
	mu    sync.Mutex
	ttl   time.Duration
	at    map[string]time.Time
	order []string // run ids in the order they were added, oldest first
}

func newCancelledRuns(ttl time.Duration) *cancelledRuns {
	return &cancelledRuns{ttl: ttl, at: map[string]time.Time{}}
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
		c.order = c.order[1:]
	}
	if _, ok := c.at[runID]; !ok {
		c.order = append(c.order, runID)
	}
	c.at[runID] = now
}

// has reports whether runID ended early within the ttl.
func (c *cancelledRuns) has(runID string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[runID]
	return ok && now.Sub(at) < c.ttl
}
