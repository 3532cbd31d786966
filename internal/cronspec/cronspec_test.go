package cronspec

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var from = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func instants(t *testing.T, s *Spec, after time.Time, n int) []time.Time {
	t.Helper()
	var out []time.Time
	for i := 0; i < n; i++ {
		after = s.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after)
	}
	return out
}

func TestParseRefuses(t *testing.T) {
	cases := []struct {
		spec, zone string
		want       error
	}{
		{"", "UTC", ErrEmpty},
		{"   ", "UTC", ErrEmpty},
		{strings.Repeat("*", MaxLen+1), "UTC", ErrTooLong},
		{"0 0 31 2 *", "UTC", ErrNeverFires},
		{"0 0 30 2 *", "Europe/Paris", ErrNeverFires},
		{"@every 0s", "UTC", ErrInterval},
		{"@every -5m", "UTC", ErrInterval},
		{"@every soon", "UTC", ErrSyntax},
		{"@at tomorrow", "UTC", ErrSyntax},
		{"TZ=UTC", "UTC", ErrSyntax},
		{"CRON_TZ=UTC 0 0 * * *", "UTC", ErrSyntax},
		{"61 * * * *", "UTC", ErrSyntax},
		{"* * * *", "UTC", ErrSyntax},
		{"@yearlyish", "UTC", ErrSyntax},
		{"0 0 * * *", "", ErrZone},
		{"0 0 * * *", "Local", ErrZone},
		{"0 0 * * *", "Mars/Olympus", ErrZone},
		{"0 0 * * *", "../../etc/passwd", ErrZone},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := Parse(c.spec, c.zone, from)
		if !errors.Is(err, c.want) {
			t.Errorf("Parse(%q, %q) = %v, want %v", c.spec, c.zone, err, c.want)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("Parse(%q) took %v", c.spec, d)
		}
	}
}

func TestForms(t *testing.T) {
	cases := []struct {
		spec string
		want []time.Time
	}{
		{"0 0 * * *", []time.Time{from.Add(24 * time.Hour), from.Add(48 * time.Hour)}},
		{"@daily", []time.Time{from.Add(24 * time.Hour), from.Add(48 * time.Hour)}},
		{"*/20 * * * * *", []time.Time{from.Add(20 * time.Second), from.Add(40 * time.Second)}},
		{"@every 90s", []time.Time{from.Add(90 * time.Second), from.Add(180 * time.Second)}},
		{"@at 2026-01-01T00:00:05Z", []time.Time{from.Add(5 * time.Second)}},
	}
	for _, c := range cases {
		s, err := Parse(c.spec, "UTC", from)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.spec, err)
		}
		got := instants(t, s, from, 2)
		if len(got) != len(c.want) {
			t.Fatalf("%q: got %v, want %v", c.spec, got, c.want)
		}
		for i := range got {
			if !got[i].Equal(c.want[i]) {
				t.Errorf("%q instant %d: got %v, want %v", c.spec, i, got[i], c.want[i])
			}
		}
	}
}

// TestDST pins what the two DST changes of New York do to daily cron
// instants: 02:30 does not exist on the spring day and does not fire, 01:30
// happens twice on the autumn day and fires once, on its first pass.
func TestDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	spring, err := Parse("30 2 * * *", "America/New_York", from)
	if err != nil {
		t.Fatal(err)
	}
	got := instants(t, spring, time.Date(2026, 3, 7, 12, 0, 0, 0, ny), 2)
	want := []time.Time{time.Date(2026, 3, 7, 2, 30, 0, 0, ny).AddDate(0, 0, 2)}
	if !got[0].Equal(want[0]) {
		t.Errorf("spring: got %v, want %v (no 02:30 on March 8)", got[0].In(ny), want[0])
	}
	autumn, err := Parse("30 1 * * *", "America/New_York", from)
	if err != nil {
		t.Fatal(err)
	}
	got = instants(t, autumn, time.Date(2026, 10, 31, 12, 0, 0, 0, ny), 2)
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC) // 01:30 EDT
	if !got[0].Equal(first) || !got[1].Equal(time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("autumn: got %v, want 01:30 EDT once then the next day", got)
	}
	quarter, err := Parse("*/15 * * * *", "America/New_York", from)
	if err != nil {
		t.Fatal(err)
	}
	got = instants(t, quarter, time.Date(2026, 11, 1, 0, 50, 0, 0, ny), 6)
	// 01:00 01:15 01:30 01:45 EDT, then the repeated hour is not fired
	// again, then 02:00 EST.
	if len(got) != 6 || !got[4].Equal(time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("repeated hour: got %v", got)
	}
}

func TestMinGap(t *testing.T) {
	s, err := Parse("* * * * * *", "UTC", from)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.MinGap(from); g != time.Second {
		t.Errorf("MinGap = %v, want 1s", g)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 0 * * *", "*/5 * * * * *", "@every 5m", "@at 2026-01-02T03:04:05Z", "0 0 31 2 *", "TZ=UTC", "@daily", "1-5/2 1,2 ? * MON-FRI"} {
		f.Add(s, "UTC")
	}
	f.Fuzz(func(t *testing.T, spec, zone string) {
		start := time.Now()
		s, err := Parse(spec, zone, from)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Parse(%q, %q) took %v", spec, zone, d)
		}
		if err == nil && s.Kind() != KindOnce && s.Next(from).IsZero() {
			t.Fatalf("Parse(%q) accepted a spec that never fires", spec)
		}
		if err != nil {
			checkMessage(t, err.Error(), spec, zone)
		}
	})
}

// checkMessage holds an error message to the quoting rule: valid UTF-8,
// no NUL, and no more than 128 consecutive bytes of any input.
func checkMessage(t *testing.T, msg string, inputs ...string) {
	t.Helper()
	if !utf8.ValidString(msg) || strings.ContainsRune(msg, 0) {
		t.Fatalf("message %q is not quoted", msg)
	}
	for _, in := range inputs {
		for i := 0; i+129 <= len(in); i++ {
			if strings.Contains(msg, in[i:i+129]) {
				t.Fatalf("message %q holds 129 bytes of %q", msg, in)
			}
		}
	}
}

func TestParseReasonsQuoteNothing(t *testing.T) {
	field := strings.Repeat("q", 120)
	cases := []struct{ spec, reason string }{
		{"1 2 " + field, "wrong number of fields"},
		{"@" + field, "no known descriptor"},
		{field + " * * * *", "other than a number"},
		{"1-2-" + field + " * * * *", "more than one hyphen"},
		{"*/1/" + field + " * * * *", "more than one slash"},
		{"*/-1 * * * *", "negative number"},
		{"61 * * * *", "out of its field's bounds"},
		{"5-1 * * * *", "after its end"},
		{"*/0 * * * *", "not a positive number"},
	}
	for _, c := range cases {
		_, err := Parse(c.spec, "UTC", from)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax saying %q", c.spec, err, c.reason)
			continue
		}
		// The spec is quoted once, cut after 128 bytes: its field, past the
		// cut or not, appears at most once.
		if n := strings.Count(err.Error(), field[:100]); n > 1 {
			t.Errorf("Parse(%q) = %v: the field appears %d times", c.spec, err, n)
		}
	}
}

func TestParseQuotesHostileInput(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 640)
	for _, in := range []string{long, "bad\xff\xfename", "bad\x00name", long[:250]} {
		if _, err := Parse(in, "UTC", from); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		} else {
			checkMessage(t, err.Error(), in)
		}
		if _, err := Parse("@daily", in, from); !errors.Is(err, ErrZone) {
			t.Errorf("Parse with zone %q = %v, want ErrZone", in, err)
		} else {
			checkMessage(t, err.Error(), in)
		}
		if _, err := Parse("0 "+in[:min(len(in), 200)]+" * * *", "UTC", from); err == nil {
			t.Errorf("Parse of a cron field %q accepted", in)
		} else {
			checkMessage(t, err.Error(), in[:min(len(in), 200)])
		}
	}
}
