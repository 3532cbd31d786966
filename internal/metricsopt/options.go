package metricsopt

import "slices"

// Holder is a module's config: a struct that embeds a [Config], through
// which it has this method.
type Holder interface{ shared() *Config }

func (c *Config) shared() *Config { return c }

// The options below are each module's With function of the same name:
// the module keeps the exported function and its godoc, and answers one
// of these, its own Option type given as O, so that the option's name in
// a refusal and the field it sets are written once.

// QueueCap is WithQueueCap.
func QueueCap[O ~func(C), C Holder](n int) O {
	return func(c C) { s := c.shared(); s.setCap("WithQueueCap", n, &s.QueueCap) }
}

// WorkflowCap is WithWorkflowCap.
func WorkflowCap[O ~func(C), C Holder](n int) O {
	return func(c C) { s := c.shared(); s.setCap("WithWorkflowCap", n, &s.WorkflowCap) }
}

// TenantCap is WithTenantCap.
func TenantCap[O ~func(C), C Holder](n int) O {
	return func(c C) { s := c.shared(); s.setCap("WithTenantCap", n, &s.TenantCap) }
}

// DurationBuckets is WithDurationBuckets; b is copied now, so that a later
// change to the caller's slice does not reach the option.
func DurationBuckets[O ~func(C), C Holder](b []float64) O {
	b = slices.Clone(b)
	return func(c C) { s := c.shared(); s.setBuckets("WithDurationBuckets", b, &s.DurationBuckets) }
}

// SubmitBuckets is WithSubmitBuckets; b is copied now, as in
// [DurationBuckets].
func SubmitBuckets[O ~func(C), C Holder](b []float64) O {
	b = slices.Clone(b)
	return func(c C) { s := c.shared(); s.setBuckets("WithSubmitBuckets", b, &s.SubmitBuckets) }
}
