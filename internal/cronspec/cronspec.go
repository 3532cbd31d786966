// Package cronspec parses the spec of a schedule and computes its instants.
// It wraps github.com/robfig/cron/v3 for cron expressions and adds what a
// schedule fired across processes needs: interval instants aligned to the
// Unix epoch (so every process computes the same ones), one-time instants,
// a bounded parse that never panics, and one firing per wall-clock time
// when a time zone repeats an hour.
package cronspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/plaitdag/plait/internal/ids"
)

// MaxLen is the longest spec accepted, in bytes.
const MaxLen = 256

// Reasons a spec is refused. Parse wraps one of them.
var (
	ErrEmpty      = errors.New("is empty")
	ErrTooLong    = errors.New("is longer than " + strconv.Itoa(MaxLen) + " bytes")
	ErrSyntax     = errors.New("is not a cron expression, descriptor, @every interval or @at instant")
	ErrInterval   = errors.New("has an interval that is not positive")
	ErrNeverFires = errors.New("never fires")
	ErrZone       = errors.New("names no known time zone")
)

// Kind says which of the three forms a spec has.
type Kind int

// Kinds of spec.
const (
	// KindCron is a cron expression (five fields, or six with seconds
	// first) or a descriptor such as @daily.
	KindCron Kind = iota + 1
	// KindInterval is "@every <duration>".
	KindInterval
	// KindOnce is "@at <RFC 3339 time>".
	KindOnce
)

// Spec is a parsed spec in its time zone. It is immutable and safe for
// concurrent use.
type Spec struct {
	kind  Kind
	text  string
	loc   *time.Location
	cron  cron.Schedule
	every time.Duration
	at    time.Time
}

// parser accepts an optional seconds field and descriptors; @every is
// handled before it, so instants are aligned the same way everywhere.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// LoadZone returns the IANA time zone name; "" and "Local" are refused,
// since the same schedule must mean the same instants in every process.
// The error quotes at most 128 bytes of name (see [ids.Quote]), and never
// time.LoadLocation's own message, which holds the name whole.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > MaxLen || strings.TrimSpace(name) != name {
		return nil, fmt.Errorf("time zone %s %w", ids.Quote(name), ErrZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %s %w", ids.Quote(name), ErrZone)
	}
	return loc, nil
}

// Parse parses spec in the time zone named zone and checks that it fires at
// least once after from (within five years for a cron expression). It never
// panics and takes well under a millisecond for any input. Its errors quote
// at most 128 bytes of spec (see [ids.Quote]) and say why in words of their
// own, never in the cron library's, which echo the spec's fields.
func Parse(spec, zone string, from time.Time) (s *Spec, err error) {
	if spec == "" {
		return nil, fmt.Errorf("spec %w", ErrEmpty)
	}
	if len(spec) > MaxLen {
		return nil, fmt.Errorf("spec %w", ErrTooLong)
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}
	s = &Spec{text: spec, loc: loc}
	fields := strings.Fields(spec)
	switch {
	case len(fields) == 0:
		return nil, fmt.Errorf("spec %w", ErrEmpty)
	case fields[0] == "@every":
		if len(fields) != 2 {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrSyntax)
		}
		d, perr := time.ParseDuration(fields[1])
		if perr != nil {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrSyntax)
		}
		if d <= 0 {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrInterval)
		}
		s.kind, s.every = KindInterval, d
	case fields[0] == "@at":
		if len(fields) != 2 {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrSyntax)
		}
		at, perr := time.ParseInLocation(time.RFC3339Nano, fields[1], loc)
		if perr != nil {
			at, perr = time.ParseInLocation("2006-01-02T15:04:05", fields[1], loc)
		}
		if perr != nil {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrSyntax)
		}
		s.kind, s.at = KindOnce, at
	default:
		// The cron library reads its own time zone prefixes (and panics
		// on some of them); the zone is a field of its own here.
		if strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=") || fields[0] == "@every" {
			return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrSyntax)
		}
		sched, perr := parseCron(strings.Join(fields, " "))
		if perr != nil {
			return nil, fmt.Errorf("spec %s %w: %s", ids.Quote(spec), ErrSyntax, cronReason(perr))
		}
		if ss, ok := sched.(*cron.SpecSchedule); ok {
			ss.Location = loc
		}
		s.kind, s.cron = KindCron, sched
	}
	if s.kind != KindOnce && s.Next(from).IsZero() {
		return nil, fmt.Errorf("spec %s %w", ids.Quote(spec), ErrNeverFires)
	}
	return s, nil
}

// parseCron calls the cron library, turning a panic on odd input into an
// error.
func parseCron(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return parser.Parse(spec)
}

// cronReasons turn the cron library's messages, which end with the field
// or the spec they refuse, into reasons that quote nothing, by prefix.
var cronReasons = []struct{ prefix, reason string }{
	{"expected exactly", "it has the wrong number of fields"},
	{"expected ", "it has the wrong number of fields"},
	{"unrecognized descriptor", "it names no known descriptor"},
	{"failed to parse int", "a field holds something other than a number, name, range, step or list"},
	{"failed to parse duration", "it holds a duration that does not parse"},
	{"negative number", "a field holds a negative number"},
	{"too many hyphens", "a range has more than one hyphen"},
	{"too many slashes", "a step has more than one slash"},
	{"beginning of range", "a range starts out of its field's bounds or after its end"},
	{"end of range", "a range ends out of its field's bounds"},
	{"step of range", "a step is not a positive number"},
	{"empty spec", "it is empty"},
}

// cronReason says why the cron library refused a spec without echoing
// it; a message it does not know is cut (see [ids.Cut]).
func cronReason(err error) string {
	msg := err.Error()
	for _, r := range cronReasons {
		if strings.HasPrefix(msg, r.prefix) {
			return r.reason
		}
	}
	return ids.Cut(msg)
}

// Kind returns the spec's form.
func (s *Spec) Kind() Kind { return s.kind }

// String returns the spec as given.
func (s *Spec) String() string { return s.text }

// Location returns the spec's time zone.
func (s *Spec) Location() *time.Location { return s.loc }

// Interval returns the interval of an @every spec, 0 otherwise.
func (s *Spec) Interval() time.Duration { return s.every }

// Next returns the first instant strictly after t, or the zero time when
// there is none (a one-time spec already past, a cron expression with no
// instant in the next five years). Interval instants are the multiples of
// the interval since the Unix epoch; cron instants are read in the spec's
// time zone, where a wall-clock time that a DST change skips does not
// happen that day, and one that a DST change repeats happens once, on its
// first pass.
func (s *Spec) Next(t time.Time) time.Time {
	switch s.kind {
	case KindInterval:
		ms := t.UnixMilli()
		every := s.every.Milliseconds()
		if every <= 0 {
			// A sub-millisecond interval: instants are counted in
			// nanoseconds instead.
			n := t.UnixNano()
			e := s.every.Nanoseconds()
			return time.Unix(0, (n/e+1)*e).UTC()
		}
		if ms < 0 {
			ms = 0
		}
		return time.UnixMilli((ms/every + 1) * every).UTC()
	case KindOnce:
		if s.at.After(t) {
			return s.at.UTC()
		}
		return time.Time{}
	case KindCron:
		n := s.cron.Next(t)
		for i := 0; i < 512 && !n.IsZero() && s.repeated(n); i++ {
			n = s.cron.Next(n)
		}
		if n.IsZero() {
			return n
		}
		return n.UTC()
	}
	return time.Time{}
}

// repeated reports whether the wall-clock reading of n in the spec's zone
// was already read at an earlier instant of the last two hours: the second
// pass of an hour a DST change repeats.
func (s *Spec) repeated(n time.Time) bool {
	w := n.In(s.loc)
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := n.Add(-back).In(s.loc)
		if e.Year() == w.Year() && e.YearDay() == w.YearDay() && e.Hour() == w.Hour() &&
			e.Minute() == w.Minute() && e.Second() == w.Second() {
			return true
		}
	}
	return false
}

// MinGap returns the shortest gap between consecutive instants among the
// first few after from, or 0 for a spec with fewer than two of them. It is
// how a minimum interval is enforced on cron expressions as on intervals.
func (s *Spec) MinGap(from time.Time) time.Duration {
	if s.kind == KindInterval {
		return s.every
	}
	var gap time.Duration
	prev := s.Next(from)
	for i := 0; i < 4 && !prev.IsZero(); i++ {
		n := s.Next(prev)
		if n.IsZero() {
			break
		}
		if d := n.Sub(prev); gap == 0 || d < gap {
			gap = d
		}
		prev = n
	}
	return gap
}
