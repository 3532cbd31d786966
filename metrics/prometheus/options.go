package plaitprom

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LabelCapDefault is the number of distinct values each of the queue,
// workflow and tenant labels takes before further values are counted as
// [Other].
const LabelCapDefault = 100

// NamespaceDefault prefixes every metric name.
const NamespaceDefault = "plait"

// ErrInvalidOption is matched by every error [New] returns for an option
// out of range.
var ErrInvalidOption = errors.New("plaitprom: invalid option")

// Option configures [New].
type Option func(*config)

type config struct {
	namespace                        string
	queueCap, workflowCap, tenantCap int
	durationBuckets, submitBuckets   []float64
	errs                             []error
}

func (c *config) reject(option string, why string) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s %s", ErrInvalidOption, option, why))
}

// WithNamespace sets the prefix of every metric name; defaults to
// NamespaceDefault. Empty is an error.
func WithNamespace(ns string) Option {
	return func(c *config) {
		if ns == "" {
			c.reject("WithNamespace", "needs a namespace")
			return
		}
		c.namespace = ns
	}
}

// WithQueueCap sets how many distinct queues get a series of their own;
// defaults to LabelCapDefault. Below 1 is an error.
func WithQueueCap(n int) Option {
	return capOption("WithQueueCap", n, func(c *config) *int { return &c.queueCap })
}

// WithWorkflowCap sets how many distinct workflow names get a series of
// their own; defaults to LabelCapDefault. Below 1 is an error.
func WithWorkflowCap(n int) Option {
	return capOption("WithWorkflowCap", n, func(c *config) *int { return &c.workflowCap })
}

// WithTenantCap sets how many distinct tenants get a series of their own
// (a run without a tenant counts as the empty tenant); defaults to
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

// WithDurationBuckets sets the buckets, in seconds, of the attempt
// duration histogram; defaults to DurationBucketsDefault. They must be
// finite, positive and increasing.
func WithDurationBuckets(b ...float64) Option {
	return bucketOption("WithDurationBuckets", b, func(c *config) *[]float64 { return &c.durationBuckets })
}

// WithSubmitBuckets sets the buckets, in seconds, of the submit latency
// histogram; defaults to SubmitBucketsDefault. They must be finite,
// positive and increasing.
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

// DurationBucketsDefault are the attempt duration buckets, in seconds:
// from half a millisecond to about two hours and a quarter.
var DurationBucketsDefault = []float64{0.0005, 0.002, 0.008, 0.032, 0.128, 0.512, 2.048, 8.192, 32.768, 131.072, 524.288, 2097.152, 8388.608}

// SubmitBucketsDefault are the submit latency buckets, in seconds: from a
// tenth of a millisecond to about six seconds.
var SubmitBucketsDefault = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 6}

func newConfig(opts []Option) (*config, error) {
	c := &config{namespace: NamespaceDefault, queueCap: LabelCapDefault, workflowCap: LabelCapDefault, tenantCap: LabelCapDefault,
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
