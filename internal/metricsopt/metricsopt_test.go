package metricsopt_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/plaitdag/plait/internal/metricsopt"
)

var errInvalid = errors.New("test: invalid option")

type config struct {
	metricsopt.Config
	name string
}

type option func(*config)

func withQueueCap(n int) option { return metricsopt.QueueCap[option](n) }

func withSubmitBuckets(b ...float64) option { return metricsopt.SubmitBuckets[option](b) }

func apply(opts ...option) (*config, error) {
	c := &config{Config: metricsopt.New(errInvalid, 100, []float64{1, 2}, []float64{3})}
	return c, metricsopt.Apply(c, &c.Config, opts)
}

// TestDefaults: no option leaves every cap at the default and the buckets
// as given, copied.
func TestDefaults(t *testing.T) {
	d := []float64{1, 2}
	c := &config{Config: metricsopt.New(errInvalid, 7, d, []float64{3})}
	if err := metricsopt.Apply(c, &c.Config, []option(nil)); err != nil {
		t.Fatal(err)
	}
	d[0] = 9
	if c.QueueCap != 7 || c.WorkflowCap != 7 || c.TenantCap != 7 ||
		!slices.Equal(c.DurationBuckets, []float64{1, 2}) || !slices.Equal(c.SubmitBuckets, []float64{3}) {
		t.Fatalf("defaults %+v", c.Config)
	}
}

// TestSet: options in range are set, the buckets as they were when the
// option was made.
func TestSet(t *testing.T) {
	b := []float64{0.5, 1}
	o := withSubmitBuckets(b...)
	b[0] = 2
	c, err := apply(withQueueCap(3), o)
	if err != nil {
		t.Fatal(err)
	}
	if c.QueueCap != 3 || !slices.Equal(c.SubmitBuckets, []float64{0.5, 1}) {
		t.Fatalf("set %+v", c.Config)
	}
}

// TestRefuse: each option out of range and each nil option is told, all
// in one error wrapping the module's sentinel, naming the option.
func TestRefuse(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []option
		says []string
	}{
		"cap 0":              {[]option{withQueueCap(0)}, []string{"WithQueueCap 0: must be at least 1"}},
		"no buckets":         {[]option{withSubmitBuckets()}, []string{"WithSubmitBuckets needs at least one bucket"}},
		"decreasing buckets": {[]option{withSubmitBuckets(1, 0.5)}, []string{"WithSubmitBuckets [1 0.5]: buckets must be"}},
		"equal buckets":      {[]option{withSubmitBuckets(1, 1)}, []string{"buckets must be"}},
		"zero bucket":        {[]option{withSubmitBuckets(0)}, []string{"buckets must be"}},
		"NaN bucket":         {[]option{withSubmitBuckets(math.NaN())}, []string{"buckets must be"}},
		"infinite bucket":    {[]option{withSubmitBuckets(1, math.Inf(1))}, []string{"buckets must be"}},
		"nil":                {[]option{withQueueCap(1), nil}, []string{"option 1 is nil"}},
		"two, both told":     {[]option{withQueueCap(0), withQueueCap(-1)}, []string{"WithQueueCap 0", "WithQueueCap -1"}},
	} {
		_, err := apply(tc.opts...)
		if !errors.Is(err, errInvalid) {
			t.Errorf("%s: err %v, want errInvalid", name, err)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", name, err, s)
			}
		}
	}
}
