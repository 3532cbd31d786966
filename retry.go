package plait

import (
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/plaitdag/plait/store"
)

// Retry policy defaults. MaxAttemptsDefault is 3 attempts in all: the first
// and two retries, as Retry(2) would give.
const (
	MaxAttemptsDefault     = 3
	InitialIntervalDefault = time.Second
	MaxIntervalDefault     = time.Minute
	MultiplierDefault      = 2.0
	JitterDefault          = 0.5
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

func firstNonZero[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

// retryAfterError carries the delay a handler asks for before the next
// attempt, such as an HTTP server's Retry-After.
type retryAfterError struct {
	delay time.Duration
	err   error
}

func (r *retryAfterError) Error() string { return r.err.Error() }
func (r *retryAfterError) Unwrap() error { return r.err }

// RetryAfter wraps err so that, when the task has an attempt left, the next
// one starts d after this one failed instead of after the retry policy's
// backoff. The attempt count and [RetryPolicy].MaxElapsed still apply: a
// task whose budget is spent fails, and one whose next start would pass
// MaxElapsed fails too. A negative d counts as zero. [Permanent] wins over
// RetryAfter. RetryAfter(d, nil) returns nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	if d < 0 {
		d = 0
	}
	return &retryAfterError{delay: d, err: err}
}

// RetryAfterDelay returns the delay asked for by the outermost [RetryAfter]
// in err's chain, and whether there is one.
func RetryAfterDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

// mergedRetry fills the zero fields of p from def, then from the package defaults.
func mergedRetry(p, def RetryPolicy) RetryPolicy {
	p.MaxAttempts = firstNonZero(p.MaxAttempts, def.MaxAttempts, MaxAttemptsDefault)
	p.InitialInterval = firstNonZero(p.InitialInterval, def.InitialInterval, InitialIntervalDefault)
	p.MaxInterval = firstNonZero(p.MaxInterval, def.MaxInterval, MaxIntervalDefault)
	p.Multiplier = firstNonZero(p.Multiplier, def.Multiplier, MultiplierDefault)
	p.Jitter = firstNonZero(p.Jitter, def.Jitter, JitterDefault)
	p.MaxElapsed = firstNonZero(p.MaxElapsed, def.MaxElapsed)
	return p
}

// retryDelay returns how long to wait after failed attempt number attempt (from
// 1), or false when no attempt is left. elapsed is the time since the first
// attempt started.
func retryDelay(p RetryPolicy, attempt int, elapsed time.Duration) (time.Duration, bool) {
	if attempt >= p.MaxAttempts {
		return 0, false
	}
	jitter := p.Jitter
	if jitter < 0 {
		jitter = 0
	}
	var b backoff.BackOff
	switch p.Backoff {
	case BackoffConstant:
		e := backoff.NewExponentialBackOff()
		e.InitialInterval, e.MaxInterval, e.Multiplier = p.InitialInterval, p.InitialInterval, 1
		e.RandomizationFactor = jitter
		b = e
	default:
		e := backoff.NewExponentialBackOff()
		e.InitialInterval, e.MaxInterval, e.Multiplier = p.InitialInterval, p.MaxInterval, p.Multiplier
		e.RandomizationFactor = jitter
		b = e
	}
	// The elapsed-time cap is ours (it is measured from the store's record
	// of the first attempt), so the library's own cap is switched off.
	if e, ok := b.(*backoff.ExponentialBackOff); ok {
		e.MaxElapsedTime = 0
		e.Reset()
	}
	var d time.Duration
	// Past 64 steps every curve has reached its cap, so a huge attempt
	// number costs no more than that.
	for i := 0; i < attempt && i < 64; i++ {
		d = b.NextBackOff()
	}
	if p.MaxElapsed > 0 && elapsed+d > p.MaxElapsed {
		return 0, false
	}
	return d, true
}

// retryNext returns the delay before the attempt after failed attempt number
// attempt, honouring a [RetryAfter] in err, or false when no attempt is
// left.
func retryNext(p RetryPolicy, attempt int, elapsed time.Duration, err error) (time.Duration, bool) {
	d, ok := retryDelay(p, attempt, elapsed)
	if !ok {
		return 0, false
	}
	asked, ok := RetryAfterDelay(err)
	if !ok {
		return d, true
	}
	if p.MaxElapsed > 0 && elapsed+asked > p.MaxElapsed {
		return 0, false
	}
	return asked, true
}

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
