package plaitotel

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LabelCapDefault is the number of distinct values each of the queue,
// workflow and tenant attributes takes before further values are counted
// as [Other].
const LabelCapDefault = 100

// ErrInvalidOption is matched by every error [New] returns for an option
// out of range.
var ErrInvalidOption = errors.New("plaitotel: invalid option")

// Option configures [New].
type Option func(*config)

type config struct {
	queueCap, workflowCap, tenantCap int
	durationBuckets, submitBuckets   []float64
	errs                             []error
}

func (c *config) reject(option string, why string) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s %s", ErrInvalidOption, option, why))
}

// WithQueueCap sets how many distinct queues get attributes of their own;
// defaults to LabelCapDefault. Below 1 is an error.
func WithQueueCap(n int) Option {
	return capOption("WithQueueCap", n, func(c *config) *int { return &c.queueCap })
}

// WithWorkflowCap sets how many distinct workflow names get attributes of
// their own; defaults to LabelCapDefault. Below 1 is an error.
func WithWorkflowCap(n int) Option {
	return capOption("WithWorkflowCap", n, func(c *config) *int { return &c.workflowCap })
}

// WithTenantCap sets how many distinct tenants get attributes of their
// own (a run without a tenant counts as the empty tenant); defaults to
// LabelCapDefault. Below 1 is an error.
func WithTenantCap(n int) Option {
	return capOption("WithTenantCap", n, func(c *config) *int { return &c.tenantCap })
}

func capOption(name string, n int, field func(*config) *int) Option {
	return func(c *config) {
		if n < 1 {
			c.reject(name, fmt.Sprintf("%d: must be at least 1", n))
			return
		}
		*field(c) = n
	}
}

// WithDurationBuckets sets the bucket boundaries, in seconds, advised for
// the attempt duration histogram; defaults to DurationBucketsDefault. They
// must be finite, positive and increasing.
func WithDurationBuckets(b ...float64) Option {
	return bucketOption("WithDurationBuckets", b, func(c *config) *[]float64 { return &c.durationBuckets })
}

// WithSubmitBuckets sets the bucket boundaries, in seconds, advised for
// the submit latency histogram; defaults to SubmitBucketsDefault. They
// must be finite, positive and increasing.
func WithSubmitBuckets(b ...float64) Option {
	return bucketOption("WithSubmitBuckets", b, func(c *config) *[]float64 { return &c.submitBuckets })
}

func bucketOption(name string, b []float64, field func(*config) *[]float64) Option {
	b = slices.Clone(b)
	return func(c *config) {
		if len(b) == 0 {
			c.reject(name, "needs at least one bucket")
			return
		}
		for i, v := range b {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || (i > 0 && v <= b[i-1]) {
				c.reject(name, fmt.Sprintf("%v: buckets must be finite, positive and increasing", b))
				return
			}
		}
		*field(c) = b
	}
}

// DurationBucketsDefault are the attempt duration boundaries, in seconds:
// from half a millisecond to about two hours and a quarter.
var DurationBucketsDefault = []float64{0.0005, 0.002, 0.008, 0.032, 0.128, 0.512, 2.048, 8.192, 32.768, 131.072, 524.288, 2097.152, 8388.608}

// SubmitBucketsDefault are the submit latency boundaries, in seconds: from
// a tenth of a millisecond to about six seconds.
var SubmitBucketsDefault = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 6}

func newConfig(opts []Option) (*config, error) {
	c := &config{queueCap: LabelCapDefault, workflowCap: LabelCapDefault, tenantCap: LabelCapDefault,
		durationBuckets: slices.Clone(DurationBucketsDefault), submitBuckets: slices.Clone(SubmitBucketsDefault)}
	for i, o := range opts {
		if o == nil {
			c.errs = append(c.errs, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i))
			continue
		}
		o(c)
	}
	return c, errors.Join(c.errs...)
}
