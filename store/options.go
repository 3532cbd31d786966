package store

import (
	"errors"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// Defaults and bounds of the options every store takes (memstore and
// redisstore name them alike: WithRetention, WithHistoryRetention,
// WithRetentionFor, WithEventCap, WithStats, WithMaxResultBytes,
// WithTaskLogLimit). They live here, beside the contract, so that an
// option means the same on every store: each store refuses a value with
// the Check function of its option, and takes these defaults for the
// options not given.
const (
	// RetentionDefault is how long a finished run is kept after it ends.
	RetentionDefault = 24 * time.Hour
	// RetentionMin is the shortest retention a store accepts: Redis
	// expires keys in ms, and a zero retention would drop a run as it
	// ends, before its caller could read it.
	RetentionMin = time.Millisecond

	// EventCapDefault is about how many events each event stream keeps
	// (see EventStore and each store's WithEventCap).
	EventCapDefault = 100_000
	// EventCapMax bounds WithEventCap: far above any useful backlog, low
	// enough that a stream's memory stays within reach of one server.
	EventCapMax = 100_000_000

	// StatsWindowDefault is how many recent attempt durations of each task
	// name are kept for the percentiles when WithStats is given 0.
	StatsWindowDefault = 1_000
	// StatsWindowMax bounds WithStats, for the same reason as EventCapMax.
	StatsWindowMax = EventCapMax

	// MaxResultBytesDefault is the largest result stored, in bytes as
	// given: far above what a result handed between tasks should be, and
	// far below what Redis accepts in one argument, so a result too large
	// for one store is too large for every store.
	MaxResultBytesDefault = 32 << 20
	// MaxResultBytesMax bounds WithMaxResultBytes: Redis's default
	// proto-max-bulk-len, the largest argument it accepts, less the flag
	// byte a stored result starts with.
	MaxResultBytesMax = 512<<20 - 1

	// TaskLogLinesDefault is the most log lines kept per task, all
	// attempts together.
	TaskLogLinesDefault = 1000
	// TaskLogBytesDefault is the most bytes of log line text kept per
	// task.
	TaskLogBytesDefault = 256 << 10
	// TaskLogLinesMax bounds the lines of WithTaskLogLimit: a run's task
	// logs are read whole by TaskLogRead.
	TaskLogLinesMax = 100_000
	// TaskLogBytesMax bounds the bytes of WithTaskLogLimit, for the same
	// reason.
	TaskLogBytesMax = 16 << 20
)

// The Check functions below return why a store refuses the value of one
// option, or nil when it accepts it: a plain error whose text is the
// Reason of the [*OptionError] the store reports, so both stores refuse
// the same values with the same words.

// CheckRetention checks the d of WithRetention: at least [RetentionMin].
func CheckRetention(d time.Duration) error {
	if d < RetentionMin {
		return errors.New("want at least " + RetentionMin.String())
	}
	return nil
}

// CheckHistoryRetention checks the d of WithHistoryRetention: zero (the
// attempt records go with their run) or more.
func CheckHistoryRetention(d time.Duration) error {
	if d < 0 {
		return errors.New("want 0 (with the run) or more")
	}
	return nil
}

// CheckRetentionFor checks the arguments of WithRetentionFor: service
// empty (every service) or a valid name, status empty (every terminal
// status) or terminal, and d at least [RetentionMin]. A rule that could
// never match a run is refused rather than kept silently.
func CheckRetentionFor(service string, status RunStatus, d time.Duration) error {
	if service != "" {
		if err := ids.Check(service); err != nil {
			return errors.New("service " + err.Error())
		}
	}
	if status != "" && !status.Terminal() {
		return errors.New(`want a terminal status or ""`)
	}
	return CheckRetention(d)
}

// CheckEventCap checks the n of WithEventCap: 1 to [EventCapMax].
func CheckEventCap(n int) error {
	return inRange(n, 1, EventCapMax)
}

// CheckStatsWindow checks the window of WithStats: 0 (the default window,
// [StatsWindowDefault]) to [StatsWindowMax].
func CheckStatsWindow(window int) error {
	return inRange(window, 0, StatsWindowMax)
}

// CheckMaxResultBytes checks the n of WithMaxResultBytes: 1 to
// [MaxResultBytesMax].
func CheckMaxResultBytes(n int) error {
	return inRange(n, 1, MaxResultBytesMax)
}

// CheckTaskLogLimit checks the arguments of WithTaskLogLimit: 1 to
// [TaskLogLinesMax] lines and 1 to [TaskLogBytesMax] bytes.
func CheckTaskLogLimit(lines, bytes int) error {
	if lines < 1 || lines > TaskLogLinesMax || bytes < 1 || bytes > TaskLogBytesMax {
		return errors.New("want 1.." + strconv.Itoa(TaskLogLinesMax) + " lines and 1.." + strconv.Itoa(TaskLogBytesMax) + " bytes")
	}
	return nil
}

// inRange refuses n outside lo..hi with the range in the reason.
func inRange(n, lo, hi int) error {
	if n < lo || n > hi {
		return errors.New("want " + strconv.Itoa(lo) + ".." + strconv.Itoa(hi))
	}
	return nil
}
