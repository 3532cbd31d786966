package store

import "context"

// QueueDepther is the capability of counting the tasks waiting on queues,
// for the [Metrics] queue depth samples. Both shipped stores implement it.
type QueueDepther interface {
	// QueueDepth counts, per queue of params.Queues, the tasks ready to be
	// claimed and those delayed (waiting out a run-at time or a backoff).
	// The counts may include entries a claim would drop as no longer
	// current (a cancelled run's tasks, say): they are for monitoring. It
	// changes nothing.
	QueueDepth(ctx context.Context, params *QueueDepthParams) (*QueueDepthResult, error)
}

// QueueDepthParams are the arguments of [QueueDepther.QueueDepth].
type QueueDepthParams struct {
	// Queues to count; empty means [DefaultQueue].
	Queues []string
}

// QueueDepthResult is the answer of [QueueDepther.QueueDepth].
type QueueDepthResult struct {
	// Queues holds one count per queue asked for, in order.
	Queues []QueueDepth
}

// QueueDepth is the count of one queue.
type QueueDepth struct {
	Queue   string
	Ready   int
	Delayed int
}
