// Package retention resolves how long a finished run is kept, from a
// default and rules per service, per terminal status, or both. The stores
// share it so that a rule means the same on each.
package retention

import "time"

// Table holds a default retention and the rules that override it. The
// zero Table keeps everything for zero time; build one with New.
type Table struct {
	def   time.Duration
	rules map[rule]time.Duration
}

type rule struct{ service, status string }

// New returns a table whose default is def.
func New(def time.Duration) *Table { return &Table{def: def} }

// SetDefault replaces the default.
func (t *Table) SetDefault(d time.Duration) { t.def = d }

// Default returns the default.
func (t *Table) Default() time.Duration { return t.def }

// Set keeps runs of service ending in status for d; an empty service
// means every service and an empty status every terminal status.
func (t *Table) Set(service, status string, d time.Duration) {
	if t.rules == nil {
		t.rules = map[rule]time.Duration{}
	}
	t.rules[rule{service, status}] = d
}

// Uniform reports whether no rule overrides the default.
func (t *Table) Uniform() bool { return len(t.rules) == 0 }

// For returns the retention of a run of service that ended in status: the
// most specific rule wins (service and status, then service, then status),
// else the default.
func (t *Table) For(service, status string) time.Duration {
	if len(t.rules) == 0 {
		return t.def
	}
	for _, r := range [...]rule{{service, status}, {service, ""}, {"", status}} {
		if r.service == "" && r.status == "" {
			continue
		}
		if d, ok := t.rules[r]; ok {
			return d
		}
	}
	return t.def
}
