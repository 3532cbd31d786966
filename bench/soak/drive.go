package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// fleet is the workers of one soak.
type fleet interface {
	// crash kills a worker (worker i, or one the fleet picks; SIGKILL, or
	// its store cut off) and starts it again; it answers which.
	crash(i int) (string, error)
	// stop stops every worker gracefully and answers the slowest stop and
	// what went wrong (a worker that did not exit 0 in time).
	stop() (time.Duration, []string)
	// drain starts one fresh worker to finish what the stop left, and
	// answers its stop.
	drain() (func() error, error)
}

// gauges read the store's memory (bytes in use and the process's RSS),
// its key count and the entries of its event stream (-1 when it has
// none).
type gauges func(ctx context.Context) (used, rss, keys, events int64, err error)

// sample is one row of the table.
type sample struct {
	at              time.Duration
	t               tally
	used, rss, keys int64
	stream          int64
	events          string
}

// drive runs one store's soak: the load for o.dur with a crash every
// o.killEvery (the first half a period in) and, when failover is not nil,
// a failover halfway; a sample every o.sample; then the graceful stop,
// the drain and the summary. It answers whether every run completed once.
func drive(o options, w io.Writer, name string, l *load, f fleet, g gauges, failover func() error) (bool, error) {
	ctx := context.Background()
	begin := time.Now()
	go l.run(ctx)
	var rows []sample
	var events []string
	take := func() {
		s := sample{at: time.Since(begin).Round(time.Second), t: l.tally(), events: strings.Join(events, ", ")}
		events = nil
		var err error
		if s.used, s.rss, s.keys, s.stream, err = g(ctx); err != nil {
			s.events = strings.TrimPrefix(s.events+", gauges: "+err.Error(), ", ")
		}
		rows = append(rows, s)
	}
	nextKill, nextSample := o.killEvery/2, o.sample
	failoverAt := time.Duration(-1)
	if failover != nil {
		failoverAt = o.dur / 2
	}
	kills := 0
	var failedOver time.Time
	for {
		now := time.Since(begin)
		if now >= o.dur {
			break
		}
		next := min(nextKill, nextSample, o.dur)
		if failoverAt >= 0 {
			next = min(next, failoverAt)
		}
		if next > now {
			time.Sleep(next - now) // the schedule of the injected faults and samples
			continue
		}
		switch {
		case failoverAt >= 0 && now >= failoverAt:
			failoverAt = -1
			t0 := time.Now()
			failedOver = t0
			if err := failover(); err != nil {
				events = append(events, "failover failed: "+err.Error())
			} else {
				events = append(events, fmt.Sprintf("failover (%s)", time.Since(t0).Round(10*time.Millisecond)))
			}
		case now >= nextKill:
			nextKill += o.killEvery
			i := kills % o.workers
			kills++
			which, err := f.crash(i)
			if err != nil {
				return false, err
			}
			events = append(events, "kill "+which)
		default:
			for nextSample <= now { // one row, however late a long failover made it
				nextSample += o.sample
			}
			take()
		}
	}

	// The graceful stop, with work in flight: the submits end and every
	// worker is stopped at once; a fresh worker then finishes what is left.
	l.stop()
	at := l.tally()
	inFlight := at.submitted - at.done
	slowest, failures := f.stop()
	stopDrain, err := f.drain()
	if err != nil {
		return false, err
	}
	settled := l.settle(3 * time.Minute)
	if err := stopDrain(); err != nil {
		failures = append(failures, "drain worker: "+err.Error())
	}
	events = append(events, fmt.Sprintf("stop (%d runs in flight; slowest worker stop %s), drain", inFlight, slowest.Round(10*time.Millisecond)))
	take()
	ok := report(w, name, o, rows, settled, failures)
	if first, last := l.lostSpan(); !first.IsZero() {
		where := "submitted from " + first.Sub(begin).Round(time.Millisecond).String() + " to " +
			last.Sub(begin).Round(time.Millisecond).String() + " into the soak"
		if !failedOver.IsZero() {
			where += fmt.Sprintf(" (%s to %s from the failover's start)",
				first.Sub(failedOver).Round(time.Millisecond), last.Sub(failedOver).Round(time.Millisecond))
		}
		fmt.Fprintf(w, "The lost runs were %s.\n", where)
	}
	return ok, nil
}

// report writes the table and the summary, and answers whether every run
// completed once.
func report(w io.Writer, name string, o options, rows []sample, settled bool, failures []string) bool {
	mb := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	keys := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	fmt.Fprintf(w, "\n## %s\n\n| t | submitted | ended in period | p50 | p99 | memory MB | RSS MB | keys | event stream | events |\n|---|---|---|---|---|---|---|---|---|---|\n", name)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.at, r.t.submitted, r.t.ended,
			r.t.p50.Round(time.Millisecond), r.t.p99.Round(time.Millisecond), mb(r.used), mb(r.rss), keys(r.keys), keys(r.stream), r.events)
	}
	last := rows[len(rows)-1].t
	fmt.Fprintf(w, "\nRuns: %d submitted (%d submits refused), %d completed, %d lost, %d stuck, %d ended otherwise; "+
		"tasks that succeeded twice: %d; leases lost (crashes): %d; attempts past the first: %d.\n",
		last.submitted, last.refused, last.completed, last.lost, last.stuck, last.notCompleted, last.twice, last.crashes, last.retries)
	// Flatness: the steady rows (after twice the retention, when finished
	// runs expire as fast as they end) first against last, the stop's row
	// aside.
	var steady []sample
	for _, r := range rows[:len(rows)-1] {
		if r.at >= 2*retention {
			steady = append(steady, r)
		}
	}
	if len(steady) >= 2 {
		a, b := steady[0], steady[len(steady)-1]
		growth := func(x, y int64) string {
			if x <= 0 {
				return "-"
			}
			return fmt.Sprintf("%+.0f%%", 100*float64(y-x)/float64(x))
		}
		fmt.Fprintf(w, "From %s to %s: memory %s, RSS %s, keys %s, p50 %s -> %s, p99 %s -> %s.\n", a.at, b.at,
			growth(a.used, b.used), growth(a.rss, b.rss), growth(a.keys, b.keys),
			a.t.p50.Round(time.Millisecond), b.t.p50.Round(time.Millisecond), a.t.p99.Round(time.Millisecond), b.t.p99.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "Too short for a steady state (it starts after %s).\n", 2*retention)
	}
	ok := settled && len(failures) == 0 && last.lost == 0 && last.stuck == 0 && last.notCompleted == 0 && last.twice == 0 &&
		last.completed == last.submitted
	if !settled {
		failures = append(failures, "some runs were still being waited for")
	}
	if ok {
		fmt.Fprintln(w, "Every run completed once.")
	} else {
		fmt.Fprintf(w, "NOT every run completed once. %s\n", strings.Join(failures, "; "))
	}
	return ok
}
