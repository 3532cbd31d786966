package plaitotel

import (
	"errors"

	"github.com/plaitdag/plait/internal/labelcap"
	"github.com/plaitdag/plait/internal/metricsopt"
)

// Other is the value a capped label takes for every value past its cap. A
// queue, workflow or tenant itself named "other" shares that series.
const Other = labelcap.Other

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
	metricsopt.Config
}

// WithQueueCap sets how many distinct queues get attributes of their own;
// defaults to LabelCapDefault. Below 1 is an error.
func WithQueueCap(n int) Option {
	return metricsopt.QueueCap[Option](n)
}

// WithWorkflowCap sets how many distinct workflow names get attributes of
// their own; defaults to LabelCapDefault. Below 1 is an error.
func WithWorkflowCap(n int) Option {
	return metricsopt.WorkflowCap[Option](n)
}

// WithTenantCap sets how many distinct tenants get attributes of their
// own (a run without a tenant counts as the empty tenant); defaults to
// LabelCapDefault. Below 1 is an error.
func WithTenantCap(n int) Option {
	return metricsopt.TenantCap[Option](n)
}

// WithDurationBuckets sets the bucket boundaries, in seconds, advised for
// the attempt duration histogram; defaults to DurationBucketsDefault. They
// must be finite, positive and increasing.
func WithDurationBuckets(b ...float64) Option {
	return metricsopt.DurationBuckets[Option](b)
}

// WithSubmitBuckets sets the bucket boundaries, in seconds, advised for
// the submit latency histogram; defaults to SubmitBucketsDefault. They
// must be finite, positive and increasing.
func WithSubmitBuckets(b ...float64) Option {
	return metricsopt.SubmitBuckets[Option](b)
}

// DurationBucketsDefault are the attempt duration boundaries, in seconds:
// from half a millisecond to about two hours and a quarter.
var DurationBucketsDefault = []float64{0.0005, 0.002, 0.008, 0.032, 0.128, 0.512, 2.048, 8.192, 32.768, 131.072, 524.288, 2097.152, 8388.608}

// SubmitBucketsDefault are the submit latency boundaries, in seconds: from
// a tenth of a millisecond to about six seconds.
var SubmitBucketsDefault = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 6}

func newConfig(opts []Option) (*config, error) {
	c := &config{Config: metricsopt.New(ErrInvalidOption, LabelCapDefault, DurationBucketsDefault, SubmitBucketsDefault)}
	return c, metricsopt.Apply(c, &c.Config, opts)
}
