package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/plaitdag/plait"
)

// runFilterFlags declares the flags of a run query on fs and answers the
// function that builds the filter once fs is parsed.
func runFilterFlags(fs *flag.FlagSet, now func() time.Time) func() (plait.RunFilter, error) {
	status := fs.String("status", "", "statuses, comma-separated: pending, running, completed, failed, cancelled")
	workflow := fs.String("workflow", "", "the workflow's name")
	service := fs.String("service", "", "the service")
	tenant := fs.String("tenant", "", "the tenant")
	createdFrom := fs.String("created-from", "", "created at or after: RFC 3339, a date, or an age (24h: 24 hours ago)")
	createdTo := fs.String("created-to", "", "created before (same forms)")
	endedFrom := fs.String("ended-from", "", "ended at or after (same forms)")
	endedTo := fs.String("ended-to", "", "ended before (same forms)")
	errPrefix := fs.String("error-prefix", "", "a task's error starts with this")
	return func() (plait.RunFilter, error) {
		f := plait.RunFilter{Workflow: *workflow, Service: *service, Tenant: *tenant, ErrorPrefix: *errPrefix}
		for _, s := range splitList(*status) {
			st := plait.RunStatus(s)
			if !st.Valid() {
				return f, usagef("-status %q: want pending, running, completed, failed or cancelled", s)
			}
			f.Statuses = append(f.Statuses, st)
		}
		var err error
		for _, t := range []struct {
			name string
			in   string
			out  *time.Time
		}{{"created-from", *createdFrom, &f.CreatedFrom}, {"created-to", *createdTo, &f.CreatedTo},
			{"ended-from", *endedFrom, &f.EndedFrom}, {"ended-to", *endedTo, &f.EndedTo}} {
			if *t.out, err = parseWhen(t.in, now()); err != nil {
				return f, usagef("-%s: %v", t.name, err)
			}
		}
		if err := f.Validate(); err != nil {
			return f, usagef("%v", err)
		}
		return f, nil
	}
}

// parseWhen reads a time flag: RFC 3339, a date (midnight UTC) or an age
// ("90m": that long before now). Empty is the zero time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "-")); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-01-02T15:04:05Z), a date (2026-01-02) or an age (24h)", s)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// wantArgs checks the number of positional arguments.
func wantArgs(args []string, n int, names string) error {
	if len(args) != n {
		return usagef("want %s, got %d argument(s)", names, len(args))
	}
	return nil
}
