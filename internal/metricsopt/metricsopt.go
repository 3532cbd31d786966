// Package metricsopt checks the options the metrics modules
// (metrics/prometheus, metrics/otel) share: the label caps and the
// histogram buckets. Each module keeps its own exported Option type, its
// With functions and their godoc, embeds a [Config] in the config its
// options set, and makes each shared With function answer the option of
// the same name here ([QueueCap]...), so both check and refuse the same
// way.
package metricsopt

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Config is the shared part of a metrics module's configuration.
type Config struct {
	// QueueCap, WorkflowCap and TenantCap are the label caps.
	QueueCap, WorkflowCap, TenantCap int
	// DurationBuckets and SubmitBuckets are the histogram boundaries, in
	// seconds.
	DurationBuckets, SubmitBuckets []float64

	invalid error
	errs    []error
}

// New answers the defaults: every cap labelCap and copies of the buckets.
// Every option refused is told by an error wrapping invalid, the module's
// ErrInvalidOption.
func New(invalid error, labelCap int, durationBuckets, submitBuckets []float64) Config {
	return Config{QueueCap: labelCap, WorkflowCap: labelCap, TenantCap: labelCap,
		DurationBuckets: slices.Clone(durationBuckets), SubmitBuckets: slices.Clone(submitBuckets), invalid: invalid}
}

// Reject records that option was refused, and why.
func (c *Config) Reject(option string, why string) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s %s", c.invalid, option, why))
}

// setCap sets *field to n, the cap of the option named option; below 1 is
// refused.
func (c *Config) setCap(option string, n int, field *int) {
	if n < 1 {
		c.Reject(option, fmt.Sprintf("%d: must be at least 1", n))
		return
	}
	*field = n
}

// setBuckets sets *field to b, the buckets of the option named option
// (copied by the caller when the option was made, so a later change to the
// caller's slice does not reach it); they must be finite, positive and
// increasing.
func (c *Config) setBuckets(option string, b []float64, field *[]float64) {
	if len(b) == 0 {
		c.Reject(option, "needs at least one bucket")
		return
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || (i > 0 && v <= b[i-1]) {
			c.Reject(option, fmt.Sprintf("%v: buckets must be finite, positive and increasing", b))
			return
		}
	}
	*field = b
}

// Apply runs every option on c, whose shared part is base, and answers
// every refusal joined (nil when none): a nil option is refused too, and
// the options after a refused one still run, so one error tells them all.
func Apply[O ~func(C), C any](c C, base *Config, opts []O) error {
	for i, o := range opts {
		if o == nil {
			base.Reject(fmt.Sprintf("option %d", i), "is nil")
			continue
		}
		o(c)
	}
	return errors.Join(base.errs...)
}
