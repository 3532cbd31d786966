package apijson

import (
	"encoding/json"
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.FixedZone("x", 3600))
	b, err := json.Marshal(struct {
		At   Stamp `json:"at,omitzero"`
		None Stamp `json:"none,omitzero"`
	}{At: Stamp(at)})
	if err != nil || string(b) != `{"at":"2026-01-02T02:04:05.678Z"}` {
		t.Fatalf("got %s, %v", b, err)
	}
	var back struct{ At Stamp }
	if err := json.Unmarshal([]byte(`{"At":"2026-01-02T02:04:05.678Z"}`), &back); err != nil ||
		!time.Time(back.At).Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("read back %v, %v", time.Time(back.At), err)
	}
}

func TestSpan(t *testing.T) {
	a := time.Unix(100, 0)
	for _, c := range []struct {
		from, to time.Time
		want     int64
	}{{a, a.Add(1500 * time.Millisecond), 1500}, {time.Time{}, a, 0}, {a, time.Time{}, 0}, {a, a.Add(-time.Second), 0}} {
		if got := Span(c.from, c.to); got != c.want {
			t.Errorf("Span(%v, %v) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

// The API prints an attempt's epoch even when 0; the command line never.
func TestAttemptEpoch(t *testing.T) {
	var zero int64
	for _, c := range []struct {
		epoch *int64
		want  string
	}{{nil, `{"attempt":1,"durationMs":0,"outcome":"retry"}`}, {&zero, `{"attempt":1,"epoch":0,"durationMs":0,"outcome":"retry"}`}} {
		b, err := json.Marshal(Attempt{Attempt: 1, Epoch: c.epoch, Outcome: "retry"})
		if err != nil || string(b) != c.want {
			t.Errorf("got %s, %v, want %s", b, err, c.want)
		}
	}
}
