package memstore

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// seriesMinutes is how many minutes the series ring holds: 25 hours, so
// every minute stays at least [store.StatsSeriesKeep] after its end.
const seriesMinutes = 25 * 60

// The counters of a minute, in the order of a seriesSlot's c.
const (
	seriesTaskOK = iota
	seriesTaskFail
	seriesTaskRetry
	seriesRunOK
	seriesRunFail
	seriesCounters
)

// seriesSlot is one minute of the ring: the minute since the Unix epoch it
// holds and its counters. A slot whose minute is not the one asked holds
// an older minute, overwritten or not yet: it reads as zeros.
type seriesSlot struct {
	minute int64
	c      [seriesCounters]int64
}

// seriesCountLocked counts one transition of kind k at now in the minute
// ring, while stats are on. The ring is made at the first count, so a
// store with stats off holds none; it never grows.
func (s *Store) seriesCountLocked(k int, now time.Time) {
	if s.st.window == 0 {
		return
	}
	if s.st.series == nil {
		s.st.series = make([]seriesSlot, seriesMinutes)
	}
	m := store.StatsMinute(now)
	sl := &s.st.series[seriesIndex(m)]
	if sl.minute != m {
		*sl = seriesSlot{minute: m}
	}
	sl.c[k]++
}

func seriesIndex(m int64) int {
	i := m % seriesMinutes
	if i < 0 {
		i += seriesMinutes
	}
	return int(i)
}

// seriesTaskLocked counts a task's move to status to.
func (s *Store) seriesTaskLocked(to store.TaskStatus, now time.Time) {
	switch to {
	case store.TaskSucceeded:
		s.seriesCountLocked(seriesTaskOK, now)
	case store.TaskFailed, store.TaskDead:
		s.seriesCountLocked(seriesTaskFail, now)
	case store.TaskRetrying:
		s.seriesCountLocked(seriesTaskRetry, now)
	}
}

// seriesRunLocked counts a run's move to status to.
func (s *Store) seriesRunLocked(to store.RunStatus, now time.Time) {
	switch to {
	case store.RunCompleted:
		s.seriesCountLocked(seriesRunOK, now)
	case store.RunFailed:
		s.seriesCountLocked(seriesRunFail, now)
	}
}

// StatsSeries answers the minutes of params from the ring the transitions
// keep (25 hours of minutes, made at the first count, never grown): one
// slot read per point. See [store.StatsSeriesStore]. Without [WithStats]
// it answers an [*store.UnsupportedError], as redisstore does.
func (s *Store) StatsSeries(ctx context.Context, params *store.StatsSeriesParams) (*store.StatsSeriesResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.cfg.statsWindow == 0 {
		return nil, &store.UnsupportedError{Capability: "StatsSeriesStore"}
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	first, n, next := params.Minutes()
	res := &store.StatsSeriesResult{Points: make([]store.StatsPoint, n), NextCursor: next}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range res.Points {
		m := first + int64(i)
		p := &res.Points[i]
		p.At = store.StatsMinuteTime(m)
		if s.st.series == nil {
			continue
		}
		if sl := &s.st.series[seriesIndex(m)]; sl.minute == m {
			p.TasksSucceeded, p.TasksFailed, p.TasksRetried = sl.c[seriesTaskOK], sl.c[seriesTaskFail], sl.c[seriesTaskRetry]
			p.RunsCompleted, p.RunsFailed = sl.c[seriesRunOK], sl.c[seriesRunFail]
		}
	}
	return res, nil
}

var _ store.StatsSeriesStore = (*Store)(nil)
