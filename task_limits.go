package plait

import (
	"errors"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Fleet-wide limits. A limit is data on the task, stored with its run like
// the rest of the spec, so every process that may claim the task applies
// the same limit without agreeing on any configuration: the value that
// holds a task back is the one it was submitted with. A store implementing
// [Limiter] checks a task's limits in the claim that would start it, and a
// task held back waits, still ready, on its limit key until a finish frees
// a slot or the rate window moves on: it does not block the tasks behind
// it, and nobody polls for it.

// checkLimits reports why a task's limits cannot be kept, or nil.
func checkLimits(ls []store.TaskLimit) error {
	var errs []error
	if len(ls) > store.MaxTaskLimits {
		errs = append(errs, fmt.Errorf("%d limits, at most %d", len(ls), store.MaxTaskLimits))
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if err := l.Check(); err != nil {
			errs = append(errs, err)
		}
		if seen[l.Key] {
			errs = append(errs, fmt.Errorf("key %s limited twice", quote(l.Key)))
		}
		seen[l.Key] = true
	}
	return errors.Join(errs...)
}

// ConcurrencyKey lets at most max tasks with key run at once, across every
// process sharing the store: "at most 2 at once per customer" is
// ConcurrencyKey("customer-"+id, 2) on each such task. A task held back
// waits as ready, its [TaskInstance.WaitingFor] "limit <key>", and starts
// when a task holding the key ends its attempt. A key given twice on one
// task, or with [RateKey] too, is one limit with both bounds.
func ConcurrencyKey(key string, max int) TaskOption {
	return taskOption{fmt.Sprintf("ConcurrencyKey(%s, %d)", quote(key), max), func(t *TaskSpec) error {
		if max < 1 {
			return errors.New("concurrency below 1")
		}
		return addLimit(t, store.TaskLimit{Key: key, Concurrency: max})
	}}
}

// RateKey lets at most n tasks with key start within any window of per,
// across every process sharing the store. A task held back waits as ready,
// its [TaskInstance.WaitingFor] "limit <key>", until the oldest start in
// the window is per old.
func RateKey(key string, n int, per time.Duration) TaskOption {
	return taskOption{fmt.Sprintf("RateKey(%s, %d, %s)", quote(key), n, per), func(t *TaskSpec) error {
		if n < 1 || per < time.Millisecond {
			return errors.New("rate below 1 or window below 1ms")
		}
		return addLimit(t, store.TaskLimit{Key: key, Rate: n, Per: per})
	}}
}

// addLimit merges l into the task's limit on the same key, or adds it.
func addLimit(t *TaskSpec, l store.TaskLimit) error {
	for i := range t.Limits {
		if t.Limits[i].Key == l.Key {
			if l.Concurrency > 0 {
				t.Limits[i].Concurrency = l.Concurrency
			}
			if l.Rate > 0 {
				t.Limits[i].Rate, t.Limits[i].Per = l.Rate, l.Per
			}
			return nil
		}
	}
	t.Limits = append(t.Limits, l)
	return nil
}

// WithQueueLimit lets at most max tasks of queue run at once across every
// process sharing the store: each task this Scheduler submits on the queue
// carries ConcurrencyKey(QueueLimitKey(queue), max). The limit travels with
// the tasks, so processes that only claim need not set it; processes that
// submit to the queue should agree on it, since each task is held to the
// value it was submitted with. Defaults to none. max below 1, an invalid
// queue name or a queue given twice is an error. The store must implement
// [Limiter]: Submit answers an [*UnsupportedError] otherwise.
func WithQueueLimit(queue string, max int) Option {
	return func(c *config) {
		if err := ids.Check(queue); err != nil {
			c.reject("WithQueueLimit", quote(queue), "queue name "+err.Error())
			return
		}
		if max < 1 {
			c.reject("WithQueueLimit", fmt.Sprintf("%s, %d", quote(queue), max), "limit below 1")
			return
		}
		if _, dup := c.queueLimits[queue]; dup {
			c.reject("WithQueueLimit", quote(queue), "queue limited twice")
			return
		}
		if c.queueLimits == nil {
			c.queueLimits = map[string]int{}
		}
		c.queueLimits[queue] = max
	}
}

// applyQueueLimits adds the configured queue limits to the tasks of spec.
func (c *config) applyQueueLimits(spec *WorkflowSpec) {
	if len(c.queueLimits) == 0 {
		return
	}
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		q := t.Queue
		if q == "" {
			q = DefaultQueue
		}
		if max, ok := c.queueLimits[q]; ok {
			_ = addLimit(t, store.TaskLimit{Key: store.QueueLimitKey(q), Concurrency: max})
		}
	}
}
