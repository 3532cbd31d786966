package action

import (
	"context"
	"errors"

	"github.com/plaitdag/plait"
)

// deleteRuns deletes runs a batch at a time (RunDeleteMany, one round
// trip per shard), or one by one on a store without it.
func (r *run) deleteRuns(ctx context.Context, items []Item) error {
	many := true
	for b := range chunks(items, batchSize(r.opts.Rate)) {
		if err := r.pace.wait(ctx, len(b)); err != nil {
			return err
		}
		ids := make([]string, len(b))
		for i, it := range b {
			ids[i] = it.ID
		}
		var errs []error
		var err error
		if many {
			errs, err = r.s.RunDeleteMany(ctx, ids...)
			if errors.Is(err, plait.ErrUnsupported) {
				many = false
			}
		}
		if !many {
			errs, err = make([]error, len(ids)), nil
			for i, id := range ids {
				errs[i] = r.s.RunDelete(ctx, id)
			}
		}
		for i, it := range b {
			it.Err = err
			if err == nil && i < len(errs) {
				it.Err = errs[i]
			}
			if err := r.done(ctx, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// purgeLetters removes letters a batch at a time.
func (r *run) purgeLetters(ctx context.Context, items []Item) error {
	for b := range chunks(items, batchSize(r.opts.Rate)) {
		if err := r.pace.wait(ctx, len(b)); err != nil {
			return err
		}
		refs := make([]plait.DeadLetterRef, len(b))
		for i, it := range b {
			refs[i] = plait.DeadLetterRef{RunID: it.RunID, Task: it.Task}
		}
		_, err := r.s.DeadLetterPurge(ctx, refs...)
		for _, it := range b {
			it.Err = err
			if err := r.done(ctx, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// requeueLetters requeues letters run by run: one replay per run takes
// all its letters of the call (a replay opens one generation), paced by
// the letters.
func (r *run) requeueLetters(ctx context.Context, items []Item) error {
	order := []string{}
	byRun := map[string][]Item{}
	for _, it := range items {
		if _, ok := byRun[it.RunID]; !ok {
			order = append(order, it.RunID)
		}
		byRun[it.RunID] = append(byRun[it.RunID], it)
	}
	for _, id := range order {
		b := byRun[id]
		if err := r.pace.wait(ctx, len(b)); err != nil {
			return err
		}
		tasks := make([]string, len(b))
		for i, it := range b {
			tasks[i] = it.Task
		}
		_, err := r.s.DeadLetterRequeue(ctx, id, tasks...)
		for _, it := range b {
			it.Err = err
			if err := r.done(ctx, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunks yields items n at a time.
func chunks(items []Item, n int) func(func([]Item) bool) {
	return func(yield func([]Item) bool) {
		for len(items) > 0 {
			k := min(n, len(items))
			if !yield(items[:k]) {
				return
			}
			items = items[k:]
		}
	}
}
