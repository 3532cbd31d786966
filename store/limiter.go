package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// TaskLimit holds a task back while others sharing its key run or started
// recently. Tasks with the same Key share the limit, whatever their run,
// workflow or queue.
type TaskLimit struct {
	// Key names the limit ("customer-42", "queue.email"). It follows the
	// rules of task names (see [ErrInvalidID]).
	Key string
	// Concurrency, when above zero, is how many tasks holding Key may run
	// at once. A task holds its key from the claim that starts it until
	// its attempt ends in any way: a finish, a release, a lost lease
	// recovered by the sweep, or a cancel.
	Concurrency int
	// Rate, when above zero, is how many tasks with Key may start within
	// any window of Per.
	Rate int
	Per  time.Duration
}

// MaxTaskLimits is the most limits one task may carry.
const MaxTaskLimits = 4

// Check reports why the limit cannot be kept, or nil: a bad key, a
// non-positive count or a negative period.
func (l TaskLimit) Check() error {
	var errs []error
	if err := ids.Check(l.Key); err != nil {
		errs = append(errs, fmt.Errorf("key %s %w", quote(l.Key), err))
	}
	if l.Concurrency < 0 || l.Rate < 0 {
		errs = append(errs, errors.New("negative concurrency or rate"))
	}
	if l.Concurrency == 0 && l.Rate == 0 {
		errs = append(errs, errors.New("neither a concurrency nor a rate"))
	}
	if l.Rate > 0 && l.Per < time.Millisecond {
		errs = append(errs, errors.New("a rate needs a window of at least 1ms"))
	}
	if l.Rate == 0 && l.Per != 0 {
		errs = append(errs, errors.New("a window without a rate"))
	}
	return errors.Join(errs...)
}

// QueueLimitKey is the limit key [WithQueueLimit] puts on the tasks of
// queue.
func QueueLimitKey(queue string) string { return "queue." + queue }

// Limiter is the capability of keeping [TaskLimit]s across every process
// that shares the store. A store that implements it
//
//   - starts a ready task only when each of its limits allows: fewer than
//     Concurrency tasks holding the key are running, and fewer than Rate
//     tasks with the key started within the last Per;
//   - holds a task its limits stop back as ready, apart from the ready
//     queues, its [TaskInstance.WaitingFor] "limit <key>", so the claim
//     goes on to the tasks behind it;
//   - releases a task's concurrency slots exactly once when its running
//     attempt ends in any way (a finish of any outcome, a sweep of its
//     expired lease, a cancel), in the same step, and gives the slot to
//     the oldest task waiting on the key, unless the task is given back
//     unfinished (the sweep requeueing it, OutcomeReleased,
//     OutcomeReturned): it keeps its place, going back to the head of its
//     ready queue ahead of every task waiting on its keys;
//   - lets tasks held back by a rate start once the window allows,
//     reporting that time in [TaskClaimResult].NextDueAt so idle workers
//     wake for it.
//
// Without it the Scheduler refuses workflows with limits with an
// [*UnsupportedError].
type Limiter interface {
	// KeepsLimits does nothing; its presence says that the store keeps
	// TaskSpec.Limits as the interface describes.
	KeepsLimits()
}

// WaitingForLimit returns the [TaskInstance.WaitingFor] of a task held
// back by the limit on key.
func WaitingForLimit(key string) string { return "limit " + key }
