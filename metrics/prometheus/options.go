package plaitprom

import (
	"errors"

	"github.com/plaitdag/plait/internal/labelcap"
	"github.com/plaitdag/plait/internal/metricsopt"
)

// Other is the value a capped label takes for every value past its cap. A
// queue, workflow or tenant itself named "other" shares that series.
const Other = labelcap.Other

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
	metricsopt.Config
	namespace string
}

// WithNamespace sets the prefix of every metric name; defaults to
// NamespaceDefault. Empty is an error.
func WithNamespace(ns string) Option {
	return func(c *config) {
		if ns == "" {
			c.Reject("WithNamespace", "needs a namespace")
			return
		}
		c.namespace = ns
	}
}

// WithQueueCap sets how many distinct queues get a series of their own;
// defaults to LabelCapDefault. Below 1 is an error.
func WithQueueCap(n int) Option {
	return metricsopt.QueueCap[Option](n)
}

// WithWorkflowCap sets how many distinct workflow names get a series of
// their own; defaults to LabelCapDefault. Below 1 is an error.
func WithWorkflowCap(n int) Option {
	return metricsopt.WorkflowCap[Option](n)
}

// WithTenantCap sets how many distinct tenants get a series of their own
// (a run without a tenant counts as the empty tenant); defaults to
// LabelCapDefault. Below 1 is an error.
func WithTenantCap(n int) Option {
	return metricsopt.TenantCap[Option](n)
}

// WithDurationBuckets sets the buckets, in seconds, of the attempt
// duration histogram; defaults to DurationBucketsDefault. They must be
// finite, positive and increasing.
func WithDurationBuckets(b ...float64) Option {
	return metricsopt.DurationBuckets[Option](b)
}

// WithSubmitBuckets sets the buckets, in seconds, of the submit latency
// histogram; defaults to SubmitBucketsDefault. They must be finite,
// positive and increasing.
func WithSubmitBuckets(b ...float64) Option {
	return metricsopt.SubmitBuckets[Option](b)
}

// DurationBucketsDefault are the attempt duration buckets, in seconds:
// from half a millisecond to about two hours and a quarter.
var DurationBucketsDefault = []float64{0.0005, 0.002, 0.008, 0.032, 0.128, 0.512, 2.048, 8.192, 32.768, 131.072, 524.288, 2097.152, 8388.608}

// SubmitBucketsDefault are the submit latency buckets, in seconds: from a
// tenth of a millisecond to about six seconds.
var SubmitBucketsDefault = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 6}

func newConfig(opts []Option) (*config, error) {
	c := &config{Config: metricsopt.New(ErrInvalidOption, LabelCapDefault, DurationBucketsDefault, SubmitBucketsDefault), namespace: NamespaceDefault}
	return c, metricsopt.Apply(c, &c.Config, opts)
}
