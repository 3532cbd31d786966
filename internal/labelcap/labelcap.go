// Package labelcap bounds the distinct values a metric label takes, for
// the metrics modules (metrics/prometheus, metrics/otel): each exports
// [Other] under its own name and caps its queue, workflow and tenant
// labels with a [Cap] each.
package labelcap

import "sync"

// Other is the value a capped label takes for every value past its cap.
const Other = "other"

// Cap bounds the distinct values of one label: it admits the first max
// values it sees, in the order this process sees them, and reads every
// later new value as [Other]. An admitted value keeps its own series for
// the life of the Cap, so a series never changes meaning.
type Cap struct {
	max  int
	mu   sync.RWMutex
	seen map[string]struct{}
}

// New answers a Cap admitting max values.
func New(max int) *Cap {
	return &Cap{max: max, seen: make(map[string]struct{}, max)}
}

// Value answers v, or Other when v is new and the cap is reached.
func (c *Cap) Value(v string) string {
	c.mu.RLock()
	_, ok := c.seen[v]
	full := len(c.seen) >= c.max
	c.mu.RUnlock()
	if ok {
		return v
	}
	if full {
		return Other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = struct{}{}
	return v
}

// Depths keeps the latest depth of each queue past the cap, so the Other
// series is their sum. It holds the queues the leader sampled since the
// last reset: those some live node serves. The zero value is ready to use.
type Depths struct {
	mu     sync.Mutex
	queues map[string][2]int
}

// Add records the sample of queue and answers the sums over every queue
// past the cap.
func (o *Depths) Add(queue string, ready, delayed int) (sumReady, sumDelayed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.queues == nil {
		o.queues = make(map[string][2]int)
	}
	o.queues[queue] = [2]int{ready, delayed}
	for _, d := range o.queues {
		sumReady += d[0]
		sumDelayed += d[1]
	}
	return sumReady, sumDelayed
}

// Reset forgets every queue: the leader stopped sampling.
func (o *Depths) Reset() {
	o.mu.Lock()
	o.queues = nil
	o.mu.Unlock()
}
