package memstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// QueueDepth counts the live ready and delayed tasks of each queue; see
// [store.QueueDepther]. The count walks the queues, so it costs time in
// proportion to the tasks queued: it is meant for a sample every few
// seconds.
func (s *Store) QueueDepth(ctx context.Context, params *store.QueueDepthParams) (*store.QueueDepthResult, error) {
	names := params.Queues
	if len(names) == 0 {
		names = defaultQueues
	}
	res := &store.QueueDepthResult{Queues: make([]store.QueueDepth, len(names))}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, name := range names {
		res.Queues[i].Queue = name
		q := s.queues[name]
		if q == nil {
			continue
		}
		for p := range q.ready {
			f := &q.ready[p]
			for _, e := range f.items[f.head:] {
				if e.t.status == store.TaskReady && e.t.qseq == e.seq {
					res.Queues[i].Ready++
				}
			}
		}
		for _, d := range q.delayed {
			if d.live() {
				res.Queues[i].Delayed++
			}
		}
	}
	return res, nil
}

var _ store.QueueDepther = (*Store)(nil)
