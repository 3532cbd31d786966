package plait

import (
	"time"

	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// Retry policy defaults. MaxAttemptsDefault is 3 attempts in all: the first
// and two retries, as Retry(2) would give.
const (
	MaxAttemptsDefault     = worker.MaxAttemptsDefault
	InitialIntervalDefault = worker.InitialIntervalDefault
	MaxIntervalDefault     = worker.MaxIntervalDefault
	MultiplierDefault      = worker.MultiplierDefault
	JitterDefault          = worker.JitterDefault
)

// ExponentialBackoff returns a policy whose delay starts at initial and
// doubles up to max, with the default jitter.
func ExponentialBackoff(initial, max time.Duration) RetryPolicy {
	return RetryPolicy{Backoff: BackoffExponential, InitialInterval: initial, MaxInterval: max}
}

// ConstantBackoff returns a policy that waits d between attempts, with the
// default jitter.
func ConstantBackoff(d time.Duration) RetryPolicy {
	return RetryPolicy{Backoff: BackoffConstant, InitialInterval: d}
}

// RetryAfter wraps err so that, when the task has an attempt left, the next
// one starts d after this one failed instead of after the retry policy's
// backoff. The attempt count and [RetryPolicy].MaxElapsed still apply: a
// task whose budget is spent fails, and one whose next start would pass
// MaxElapsed fails too. A negative d counts as zero. [Permanent] wins over
// RetryAfter. RetryAfter(d, nil) returns nil.
func RetryAfter(d time.Duration, err error) error { return worker.RetryAfter(d, err) }

// RetryAfterDelay returns the delay asked for by the outermost [RetryAfter]
// in err's chain, and whether there is one.
func RetryAfterDelay(err error) (time.Duration, bool) { return worker.RetryAfterDelay(err) }

// RetryPolicy says how often and how soon a failed task runs again: see
// [store.RetryPolicy]. Build one with [ExponentialBackoff] or
// [ConstantBackoff].
type RetryPolicy = store.RetryPolicy

// BackoffKind picks the delay curve between attempts.
type BackoffKind = store.BackoffKind

// Backoff kinds.
const (
	BackoffExponential = store.BackoffExponential
	BackoffConstant    = store.BackoffConstant
)
