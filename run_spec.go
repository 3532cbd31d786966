package plait

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// RunSpecGetResult is a run's definition as read back: see
// [store.RunSpecGetResult].
type RunSpecGetResult = store.RunSpecGetResult

// RunSpecPart names a part of a run that [Scheduler.RunSpecGet] reads
// beside its definition when asked.
type RunSpecPart uint8

const (
	// RunSpecPayloads reads each task's encoded payload into its TaskSpec.
	RunSpecPayloads RunSpecPart = iota + 1
	// RunSpecResults reads the encoded results of the tasks that succeeded.
	RunSpecResults
)

// RunSpecGet answers what run runID was submitted as: its workflow's name
// and error strategy and every task's definition (handler, dependencies and
// their conditions, join, retry, timeout, priority, queue, requires,
// run-at, delay, limits), in definition order, with the payloads and the
// results of the parts asked for. It is what [RenderMermaid] and
// [RenderDOT] draw a run from, with [Scheduler.RunGet] for its state:
//
//	spec, err := s.RunSpecGet(ctx, id)
//	run, err := s.RunGet(ctx, id)
//	chart, err := plait.RenderMermaid(spec.Spec, run)
//
// A payload the store no longer keeps (redisstore drops a long payload of a
// run of at most 16 tasks when its task succeeds) answers nil and is named
// in PayloadsDropped. One call reads one run, its tasks and, when asked,
// their payloads and results, and changes nothing. It answers
// [ErrNotFound] for an unknown run or one past its retention,
// [ErrInvalidArgument] for no run id or an unknown part, and an
// [*UnsupportedError] when the store does not implement [store.RunSpecStore].
func (s *Scheduler) RunSpecGet(ctx context.Context, runID string, parts ...RunSpecPart) (*RunSpecGetResult, error) {
	ss, err := capability[store.RunSpecStore](s.store, "RunSpecStore")
	if err != nil {
		return nil, err
	}
	p := &store.RunSpecGetParams{ID: runID}
	for _, part := range parts {
		switch part {
		case RunSpecPayloads:
			p.Payloads = true
		case RunSpecResults:
			p.Results = true
		default:
			return nil, fmt.Errorf("plait: run spec part %d, want RunSpecPayloads or RunSpecResults: %w", part, ErrInvalidArgument)
		}
	}
	return ss.RunSpecGet(ctx, p)
}
