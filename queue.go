package plait

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Priority orders ready tasks: see [store.Priority]. The zero value is
// PriorityNormal.
type Priority = store.Priority

// Priorities, lowest first, and the queue tasks go to unless [OnQueue]
// names another.
const (
	PriorityLow    = store.PriorityLow
	PriorityNormal = store.PriorityNormal
	PriorityHigh   = store.PriorityHigh
	PriorityUrgent = store.PriorityUrgent
	DefaultQueue   = store.DefaultQueue
)

// QueuePause stops every node of the fleet taking tasks from queue until
// [Scheduler.QueueResume]; tasks already claimed run on, and new tasks wait in
// the queue. Each node learns it at its next heartbeat. Pausing a paused
// queue changes nothing.
func (s *Scheduler) QueuePause(ctx context.Context, queue string) error {
	return s.queuePause(ctx, queue, false)
}

// QueueResume lets every node take tasks from queue again; each node learns it
// at its next heartbeat and claims at once.
func (s *Scheduler) QueueResume(ctx context.Context, queue string) error {
	return s.queuePause(ctx, queue, true)
}

func (s *Scheduler) queuePause(ctx context.Context, queue string, resume bool) error {
	ns, err := s.nodeStore()
	if err != nil {
		return err
	}
	if err := ids.Check(queue); err != nil {
		return fmt.Errorf("plait: queue %s: %w: %v", quote(queue), ErrInvalidID, err)
	}
	_, err = ns.QueuePause(ctx, &store.QueuePauseParams{Queue: queue, Resume: resume})
	return err
}

// QueueListPaused lists the queues paused for the fleet, sorted.
func (s *Scheduler) QueueListPaused(ctx context.Context) ([]string, error) {
	ns, err := s.nodeStore()
	if err != nil {
		return nil, err
	}
	res, err := ns.QueueListPaused(ctx, &store.QueueListPausedParams{})
	if err != nil {
		return nil, err
	}
	return res.Queues, nil
}
