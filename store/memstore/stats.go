package memstore

import (
	"context"
	"strconv"
	"time"

	"github.com/plaitdag/plait/store"
)

// WithStats turns on the counters and duration windows of
// [plait.Scheduler.Stats]: every transition then also counts itself per
// queue and per workflow and keeps the attempt durations of each task
// name, window of them ([store.StatsWindowDefault] when window is 0). They
// are off by default, exactly as on Redis, and StoreStats answers an
// [*store.UnsupportedError] while they are, so a program reads the same
// answer from either store. A window below 0 or above
// [store.StatsWindowMax] is an error. A memstore shares its data with no
// other store, so this is simply its setting; on Redis, where processes
// share a prefix, the first store of the prefix records it for all.
func WithStats(window int) Option {
	return func(c *config) {
		if err := store.CheckStatsWindow(window); err != nil {
			c.reject("WithStats", strconv.Itoa(window), err.Error())
			return
		}
		if window == 0 {
			window = store.StatsWindowDefault
		}
		c.statsWindow = window
	}
}

// statsLog holds the counters per queue and per workflow and a ring of
// recent attempt durations per task name, all kept up to date by the status
// transitions (status.go) while stats are on.
type statsLog struct {
	// window is the durations kept per task name; 0 while stats are off,
	// and then nothing is counted.
	window    int
	queues    map[string]*store.StatCounters
	workflows map[string]*store.StatCounters
	durations map[string]*durRing
	// series is the ring of per-minute counters (stats_series.go), made
	// at the first count.
	series []seriesSlot
}

// durRing is a ring of the newest durations of one task name.
type durRing struct {
	d    []time.Duration
	next int
}

func (l *statsLog) counters(m *map[string]*store.StatCounters, name string) *store.StatCounters {
	if *m == nil {
		*m = make(map[string]*store.StatCounters)
	}
	c := (*m)[name]
	if c == nil {
		c = &store.StatCounters{}
		(*m)[name] = c
	}
	return c
}

// statsRunLocked counts a new run of its workflow.
func (s *Store) statsRunLocked(r *run) {
	if s.st.window == 0 {
		return
	}
	s.st.counters(&s.st.workflows, r.rec.Workflow).Submitted++
}

// statsTaskLocked counts t's move from status from to its current one.
func (s *Store) statsTaskLocked(t *task, from store.TaskStatus, now time.Time) {
	to := t.status
	if s.st.window == 0 || from == "" || from == to {
		return
	}
	s.seriesTaskLocked(to, now)
	spec := t.spec()
	q := s.st.counters(&s.st.queues, spec.Queue)
	w := s.st.counters(&s.st.workflows, t.run.rec.Workflow)
	if from == store.TaskPending && to == store.TaskReady {
		q.Submitted++
	}
	for _, c := range [2]*store.StatCounters{q, w} {
		if from == store.TaskRunning {
			c.Running--
		}
		switch to {
		case store.TaskRunning:
			c.Running++
		case store.TaskSucceeded:
			c.Succeeded++
		case store.TaskFailed:
			c.Failed++
		case store.TaskDead:
			c.Dead++
		case store.TaskRetrying:
			c.Retried++
		}
		if from == store.TaskRunning && (to == store.TaskReady || to == store.TaskDead) && lastOutcome(t) == "crashed" {
			c.Crashed++
		}
	}
	if from == store.TaskRunning && (to == store.TaskSucceeded || to == store.TaskFailed || to == store.TaskRetrying) {
		s.recordDurationLocked(t.inst.Name, now.Sub(t.claimedAt))
	}
}

func lastOutcome(t *task) string {
	if n := len(t.inst.Attempts); n > 0 {
		return t.inst.Attempts[n-1].Outcome
	}
	return ""
}

func (s *Store) recordDurationLocked(name string, d time.Duration) {
	l := &s.st
	if l.durations == nil {
		l.durations = make(map[string]*durRing)
	}
	ring := l.durations[name]
	if ring == nil {
		ring = &durRing{}
		l.durations[name] = ring
	}
	if len(ring.d) < l.window {
		ring.d = append(ring.d, d)
		return
	}
	ring.d[ring.next] = d
	ring.next = (ring.next + 1) % len(ring.d)
}

// StoreStats returns copies of the counters and the duration windows. See
// [store.StatsStore]. Its cost grows with the number of queues, workflows
// and task names, never with the number of runs. Without [WithStats] the
// store keeps nothing, and it answers an [*store.UnsupportedError], as
// redisstore does.
func (s *Store) StoreStats(ctx context.Context, params *store.StoreStatsParams) (*store.StoreStatsResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.cfg.statsWindow == 0 {
		return nil, &store.UnsupportedError{Capability: "StatsStore"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &store.StoreStatsResult{
		Queues:    make(map[string]store.StatCounters, len(s.st.queues)),
		Workflows: make(map[string]store.StatCounters, len(s.st.workflows)),
		Durations: make(map[string][]time.Duration, len(s.st.durations)),
	}
	for k, c := range s.st.queues {
		res.Queues[k] = *c
	}
	for k, c := range s.st.workflows {
		res.Workflows[k] = *c
	}
	for k, r := range s.st.durations {
		res.Durations[k] = append([]time.Duration(nil), r.d...)
	}
	return res, nil
}
