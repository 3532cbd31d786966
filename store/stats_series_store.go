package store

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// StatsSeriesStore is the capability of answering, per minute, how many
// tasks succeeded, failed and were retried and how many runs completed
// and failed: the throughput and failure series of the last hours. Like
// [StatsStore] it is kept by the status transitions themselves, only
// while the store's stats are on (off by default; a store answers an
// [*UnsupportedError] while they are off), and reading it costs the same
// however many runs the store holds.
type StatsSeriesStore interface {
	// StatsSeries answers one point per minute of [From, To), oldest
	// first, at most [StatsSeriesPageMax] per call, and the cursor of the
	// rest. A minute in which nothing happened is a point of zeros, and so
	// is a minute the store no longer keeps (older than [StatsSeriesKeep]).
	StatsSeries(ctx context.Context, params *StatsSeriesParams) (*StatsSeriesResult, error)
}

// StatsSeriesPageMax is the most points one StatsSeries call answers: a
// day of minutes.
const StatsSeriesPageMax = 1440

// StatsSeriesKeep is how long a store keeps a minute's counters at least,
// from the minute's end; a store may keep them longer.
const StatsSeriesKeep = 24 * time.Hour

// StatsSeriesParams are the arguments of [StatsSeriesStore.StatsSeries].
type StatsSeriesParams struct {
	// From and To bound the series: the minutes that start at or after
	// From cut down to the minute, and before To. Both are required, From
	// before To.
	From time.Time
	To   time.Time
	// Cursor is the NextCursor of the previous call over the same range:
	// the series goes on from there. Empty starts at From.
	Cursor string
}

// StatsSeriesResult is the answer of [StatsSeriesStore.StatsSeries].
type StatsSeriesResult struct {
	// Points holds one point per minute, oldest first, none missing.
	Points []StatsPoint
	// NextCursor goes on with the minutes after the last point; empty
	// when the series reached To.
	NextCursor string
}

// StatsPoint counts the transitions of one minute on the store's clock.
type StatsPoint struct {
	// At is the minute's start, in UTC.
	At time.Time
	// TasksSucceeded, TasksFailed and TasksRetried count tasks that
	// succeeded, that failed for good or died (failed and dead), and
	// attempts that ended in a retry.
	TasksSucceeded int64
	TasksFailed    int64
	TasksRetried   int64
	// RunsCompleted and RunsFailed count runs that ended completed and
	// failed.
	RunsCompleted int64
	RunsFailed    int64
}

// Validate reports whether the parameters are usable: From and To set, From
// before To, and a cursor as StatsSeries makes them.
func (p *StatsSeriesParams) Validate() error {
	if p.From.IsZero() || p.To.IsZero() || !p.From.Before(p.To) {
		return fmt.Errorf("plait: stats series needs From before To: %w", ErrInvalidArgument)
	}
	if p.Cursor != "" {
		if _, err := p.cursorMinute(); err != nil {
			return err
		}
	}
	return nil
}

func (p *StatsSeriesParams) cursorMinute() (int64, error) {
	m, err := strconv.ParseInt(p.Cursor, 10, 64)
	if err != nil || m < 0 {
		return 0, fmt.Errorf("plait: stats series cursor %s: %w", quote(p.Cursor), ErrInvalidArgument)
	}
	return m, nil
}

// Minutes answers the minutes of this call's page, as minutes since the
// Unix epoch: the first, how many (at most [StatsSeriesPageMax], 0 when
// the cursor is past To), and the cursor of the next page (empty at the
// end). Call it after Validate.
func (p *StatsSeriesParams) Minutes() (first int64, n int, next string) {
	first = floorDiv(p.From.UnixMilli(), 60000)
	if p.Cursor != "" {
		first, _ = p.cursorMinute()
	}
	// the last minute is the one that starts before To
	end := floorDiv(p.To.UnixMilli()-1, 60000) + 1
	if end <= first {
		return first, 0, ""
	}
	if end-first > StatsSeriesPageMax {
		return first, StatsSeriesPageMax, strconv.FormatInt(first+StatsSeriesPageMax, 10)
	}
	return first, int(end - first), ""
}

// StatsMinute is the minute since the Unix epoch that t falls in.
func StatsMinute(t time.Time) int64 { return floorDiv(t.UnixMilli(), 60000) }

// StatsMinuteTime is the start of minute m since the Unix epoch, in UTC.
func StatsMinuteTime(m int64) time.Time { return time.UnixMilli(m * 60000).UTC() }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
