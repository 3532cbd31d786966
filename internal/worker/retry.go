package worker

import (
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/plaitdag/plait/store"
)

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

// MergedRetry fills the zero fields of p from def, then from the package defaults.
func MergedRetry(p, def store.RetryPolicy) store.RetryPolicy {
	p.MaxAttempts = firstNonZero(p.MaxAttempts, def.MaxAttempts, MaxAttemptsDefault)
	p.InitialInterval = firstNonZero(p.InitialInterval, def.InitialInterval, InitialIntervalDefault)
	p.MaxInterval = firstNonZero(p.MaxInterval, def.MaxInterval, MaxIntervalDefault)
	p.Multiplier = firstNonZero(p.Multiplier, def.Multiplier, MultiplierDefault)
	p.Jitter = firstNonZero(p.Jitter, def.Jitter, JitterDefault)
	p.MaxElapsed = firstNonZero(p.MaxElapsed, def.MaxElapsed)
	return p
}

// RetryDelay returns how long to wait after failed attempt number attempt (from
// 1), or false when no attempt is left. elapsed is the time since the first
// attempt started.
func RetryDelay(p store.RetryPolicy, attempt int, elapsed time.Duration) (time.Duration, bool) {
	if attempt >= p.MaxAttempts {
		return 0, false
	}
	jitter := p.Jitter
	if jitter < 0 {
		jitter = 0
	}
	var b backoff.BackOff
	switch p.Backoff {
	case store.BackoffConstant:
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
func retryNext(p store.RetryPolicy, attempt int, elapsed time.Duration, err error) (time.Duration, bool) {
	d, ok := RetryDelay(p, attempt, elapsed)
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

// Retry policy defaults, re-exported by the root package.
const (
	MaxAttemptsDefault     = 3
	InitialIntervalDefault = time.Second
	MaxIntervalDefault     = time.Minute
	MultiplierDefault      = 2.0
	JitterDefault          = 0.5
)

// RetryAfter wraps err so the next attempt starts d after this one failed:
// see the root package's RetryAfter.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	if d < 0 {
		d = 0
	}
	return &retryAfterError{delay: d, err: err}
}

// RetryAfterDelay returns the delay asked for by the outermost RetryAfter
// in err's chain, and whether there is one.
func RetryAfterDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Permanent wraps err so the task fails at once instead of being retried;
// Permanent(nil) returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, came from
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
