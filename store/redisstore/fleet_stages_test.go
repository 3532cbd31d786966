package redisstore_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// fleetStages splits each iteration of BenchmarkFleetPickup at the
// timestamps of the worker that ran the task (fleetTracer's lines; the
// processes share the host's wall clock):
//
//	submit  Submit's call to its return
//	wake    Submit's call to the runner's ReadyWait return
//	claim   that return to the end of the claim that took the task
//	  (claim-call: that claim's own round trips)
//	start   the claim's end to the handler's start
//	finish  the handler's start to the end of the finish call
//	notify  the finish call's end to RunWait's return
//
// and counts the ReadyWait returns of the other worker in the iteration
// (woken for nothing).
type fleetStages struct {
	names  []string
	values map[string][]time.Duration
	others int
	missed int
}

var fleetStageNames = []string{"submit", "wake", "claim", "claim-call", "start", "finish", "notify"}

func (s *fleetStages) add(events []fleetEvent, t0, t1, t2 time.Time) {
	if s.values == nil {
		s.values = map[string][]time.Duration{}
	}
	runner, ran := -1, time.Time{}
	for _, e := range events {
		if e.kind == "run" && !e.start.Before(t0) {
			runner, ran = e.worker, e.start
			break
		}
	}
	var woke, claimed, finished time.Time
	var claimCall time.Duration
	for _, e := range events {
		if e.end.Before(t0) {
			continue
		}
		if e.worker != runner {
			if e.kind == "wait" {
				s.others++
			}
			continue
		}
		switch {
		case e.kind == "wait" && woke.IsZero():
			woke = e.end
		case (e.kind == "claim" || e.kind == "finish") && e.n > 0 && claimed.IsZero():
			claimed, claimCall = e.end, e.end.Sub(e.start)
		case e.kind == "finish" && finished.IsZero() && !ran.IsZero() && !e.start.Before(ran):
			finished = e.end
		}
	}
	if runner < 0 || woke.IsZero() || claimed.IsZero() || finished.IsZero() {
		s.missed++
		return
	}
	for name, d := range map[string]time.Duration{
		"submit": t1.Sub(t0), "wake": woke.Sub(t0), "claim": claimed.Sub(woke), "claim-call": claimCall,
		"start": ran.Sub(claimed), "finish": finished.Sub(ran), "notify": t2.Sub(finished),
	} {
		s.values[name] = append(s.values[name], d)
	}
}

func (s *fleetStages) log(b *testing.B) {
	var out strings.Builder
	fmt.Fprintf(&out, "%-10s %8s %8s %8s %8s (ms)\n", "stage", "p50", "p90", "p99", "max")
	for _, name := range fleetStageNames {
		v := s.values[name]
		if len(v) == 0 {
			continue
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		q := func(p float64) float64 { return float64(v[int(p*float64(len(v)-1))].Microseconds()) / 1000 }
		fmt.Fprintf(&out, "%-10s %8.2f %8.2f %8.2f %8.2f\n", name, q(0.5), q(0.9), q(0.99), q(1))
	}
	fmt.Fprintf(&out, "other worker woken: %d; iterations without a full trace: %d", s.others, s.missed)
	b.Log("\n" + out.String())
}
