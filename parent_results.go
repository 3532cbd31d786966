package plait

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// InlineResultsDefault is how many parents a task may have and still get
// their results inside its claim (see [WithInlineResults]).
const InlineResultsDefault = 64

// WithInlineResults sets how many parents a task may have and still get
// their results inside its claim; a task with more (a wide join) is claimed
// without its parents, neither their names nor their results, and its
// handler's reads fetch the results it asks for, by name or all at once,
// batched ([Task.ParentResults]), from a store with the [ResultStore]
// capability ([TaskResultsParams].ParentsOf). So the pickup of a join of
// thousands of tasks carries none of their names or results, and a chain
// or a small join gets them in
// the claim as before, in no extra round trip. Zero puts every result in
// the claim whatever the fan-in. Default [InlineResultsDefault]; a store
// without ResultStore always puts them in the claim.
func WithInlineResults(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithInlineResults", strconv.Itoa(n), "must not be negative")
			return
		}
		c.inlineResults, c.inlineResultsSet = n, true
	}
}

// ParentResults returns the encoded results of the named parents that
// succeeded with one (all the task's parents when none is named), reading
// from the store those the claim did not carry, in as few calls as
// [TaskResultsMax] allows, and keeping them for the task's later reads. A
// name that is not a parent with a result is left out ([Task.ParentResult]
// tells a name that is not a parent from one without a result). It fails only when
// the store does: for a task claimed with its parents' results, or built
// by hand, it answers from what the task holds.
func (t *Task) ParentResults(ctx context.Context, names ...string) (map[string][]byte, error) {
	if err := t.fetchParents(ctx, names); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		out := make(map[string][]byte, len(t.parents))
		for n, b := range t.parents {
			out[n] = b
		}
		return out, nil
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		if b, ok := t.parents[n]; ok {
			out[n] = b
		}
	}
	return out, nil
}

// parentRaw answers the result of parent name, reading it first when the
// claim left it out; ctx is the attempt's.
func (t *Task) parentRaw(name string) ([]byte, bool, error) {
	if err := t.fetchParents(t.attemptContext(), []string{name}); err != nil {
		return nil, false, err
	}
	b, ok := t.parents[name]
	return b, ok, nil
}

// attemptContext is the context of the attempt running the task, for the
// reads a handler's plain accessors make on its behalf.
func (t *Task) attemptContext() context.Context {
	if t.exec != nil {
		return t.exec.Context()
	}
	return context.Background()
}

// fetchParents reads the results of the named parents (every parent when
// none is named) that the task does not hold yet.
func (t *Task) fetchParents(ctx context.Context, names []string) error {
	lp := t.lazy
	if lp == nil {
		return nil
	}
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.fetched {
		return nil
	}
	if len(names) == 0 {
		res, err := lp.store.TaskResults(ctx, &store.TaskResultsParams{RunID: t.RunID, ParentsOf: t.Name})
		if err != nil {
			return fmt.Errorf("plait: task %s: read its parents' results: %w", quote(t.Name), err)
		}
		t.keepParents(res.Results)
		lp.fetched = true
		return nil
	}
	var want []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] || lp.absent[n] {
			continue
		}
		seen[n] = true
		if _, ok := t.parents[n]; !ok {
			want = append(want, n)
		}
	}
	for len(want) > 0 {
		batch := want[:min(len(want), store.TaskResultsMax)]
		want = want[len(batch):]
		res, err := lp.store.TaskResults(ctx, &store.TaskResultsParams{RunID: t.RunID, Tasks: batch, ParentsOf: t.Name})
		if err != nil {
			return fmt.Errorf("plait: task %s: read its parents' results: %w", quote(t.Name), err)
		}
		t.keepParents(res.Results)
		for _, n := range batch {
			if _, ok := res.Results[n]; !ok {
				lp.absent[n] = true
			}
		}
	}
	return nil
}

// keepParents adds results read from the store to those the task holds.
func (t *Task) keepParents(rs map[string][]byte) {
	if t.parents == nil {
		t.parents = make(map[string][]byte, len(rs))
	}
	for n, b := range rs {
		t.parents[n] = b
	}
}

// lazyParents is what a task claimed without its parents needs to read
// their results when its handler asks: the store, which answers only the
// task's parents (TaskResultsParams.ParentsOf), so the worker never holds
// their names. What was read is kept on the Task.
type lazyParents struct {
	store store.ResultStore
	// payloads tells a task of the run from a name the run lacks; nil on
	// a store without PayloadStore.
	payloads store.PayloadStore
	mu       sync.Mutex
	absent   map[string]bool // read, and not a parent with a result
	// outsider holds, for a name absent, whether it is known not to be a
	// parent (see Task.outsider).
	outsider map[string]bool
	fetched  bool // every parent has been read
}

// newLazyParents answers what a task claimed without its parents needs to
// read their results, or nil when the claim carried them.
func newLazyParents(ct *store.ClaimedTask, results store.ResultStore, st store.Store) *lazyParents {
	if !ct.ParentResultsDeferred || results == nil {
		return nil
	}
	payloads, _ := st.(store.PayloadStore)
	return &lazyParents{store: results, payloads: payloads, absent: map[string]bool{}, outsider: map[string]bool{}}
}

// depNames lists the parents a claim carried.
func depNames(deps []store.Dep) []string {
	if len(deps) == 0 {
		return nil
	}
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.Task
	}
	return names
}

// notAParent answers the error of a handler that asked for name when the
// task has no parent of that name, or nil when it has one or, claimed
// without its parents, cannot tell (see [Task.ParentResult]).
func (t *Task) notAParent(name string) *ParentError {
	if t.lazy == nil {
		seen := make(map[string]bool, len(t.deps)+len(t.parents))
		for _, n := range t.deps {
			seen[n] = true
		}
		for n := range t.parents {
			seen[n] = true
		}
		if seen[name] {
			return nil
		}
		parents := make([]string, 0, len(seen))
		for n := range seen {
			parents = append(parents, n)
		}
		sort.Strings(parents)
		return &ParentError{Task: t.Name, Parent: name, Parents: parents}
	}
	if ids.Check(name) == nil && !t.outsider(name) {
		return nil
	}
	return &ParentError{Task: t.Name, Parent: name, Parents: t.Parents(), Deferred: true}
}

// outsider reports whether name, which the store did not answer as a
// parent with a result, is known not to be a parent at all: the run has
// no such task, or that task succeeded (a parent that succeeded would
// have been answered). A store call that fails tells nothing.
func (t *Task) outsider(name string) bool {
	lp, ctx := t.lazy, t.attemptContext()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if out, ok := lp.outsider[name]; ok {
		return out
	}
	res, err := lp.store.TaskResults(ctx, &store.TaskResultsParams{RunID: t.RunID, Tasks: []string{name}})
	if err != nil {
		return false
	}
	_, out := res.Results[name]
	if !out && lp.payloads != nil {
		pr, err := lp.payloads.TaskPayloads(ctx, &store.TaskPayloadsParams{RunID: t.RunID, Tasks: []string{name}})
		if err != nil {
			return false
		}
		_, exists := pr.Payloads[name]
		out = !exists
	}
	lp.outsider[name] = out
	return out
}
