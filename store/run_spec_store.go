package store

import (
	"context"
	"fmt"
)

// RunSpecStore is the capability of reading back what a run was submitted
// as: its workflow's name and error strategy and every task's definition
// (handler, dependencies and their conditions, join, retry, timeout,
// priority, queue, required capabilities, run-at and delay, limits), and,
// when asked, the tasks' payloads and results. It is what a run is drawn
// from (plait's RenderMermaid and RenderDOT) and what a console shows of a
// run it did not submit. Both shipped stores implement it.
//
// One call reads one run: its definition, of at most as many tasks as the
// run has (the Scheduler submits at most its MaxTasks, 10,000 by
// default), with their payloads and results when asked. It changes
// nothing.
type RunSpecStore interface {
	// RunSpecGet answers the definition of run params.ID as it was
	// stored at submission, with the tasks in definition order. A task's
	// Payload is filled only with params.Payloads, from wherever the store
	// keeps it; a store may drop a payload once its task has succeeded
	// (redisstore drops a long payload of a small run kept in a key of its
	// own: see docs/redis-schema.md), and such a payload answers nil, its
	// task named in [RunSpecGetResult].PayloadsDropped. With
	// params.Results, [RunSpecGetResult].Results holds the result of every
	// task that succeeded, as [ResultStore.TaskResults] answers them. A
	// run that does not exist, or whose retention is over, answers
	// [ErrNotFound]; params that fail [RunSpecGetParams.Validate] answer
	// [ErrInvalidArgument].
	RunSpecGet(ctx context.Context, params *RunSpecGetParams) (*RunSpecGetResult, error)
}

// RunSpecGetParams are the arguments of [RunSpecStore.RunSpecGet].
type RunSpecGetParams struct {
	// ID is the run whose definition is read.
	ID string
	// Payloads asks for every task's payload in its TaskSpec.
	Payloads bool
	// Results asks for the results of the tasks that succeeded.
	Results bool
}

// Validate reports why the params cannot be answered: nil params or an
// empty run id, wrapping [ErrInvalidArgument]. Stores call it before
// their first read.
func (p *RunSpecGetParams) Validate() error {
	if p == nil || p.ID == "" {
		return fmt.Errorf("plait: run spec get needs a run id: %w", ErrInvalidArgument)
	}
	return nil
}

// RunSpecGetResult is the answer of [RunSpecStore.RunSpecGet].
type RunSpecGetResult struct {
	// Spec is the run's workflow as it was stored: the name, the error
	// strategy ([StrategyContinue] when none was given) and each task in
	// definition order, its queue [DefaultQueue] when none was given. A
	// task's Payload is nil unless payloads were asked for.
	Spec *WorkflowSpec
	// PayloadsDropped names, in definition order, the tasks whose payload
	// was asked for but is no longer kept (their Payload is nil). Empty
	// unless payloads were asked for; always empty on memstore.
	PayloadsDropped []string
	// Results holds, when results were asked for, the encoded result of
	// each task that succeeded, by task name (nil for one that succeeded
	// without a result); nil otherwise.
	Results map[string][]byte
}
