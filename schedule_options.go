package plait

import "time"

// Schedule option defaults and bounds.
const (
	// ScheduleTickDefault is how often the leader looks for due schedules
	// when none is due sooner, and how often the other processes try for
	// the leader lease.
	ScheduleTickDefault = time.Second
	// LeaderLeaseDefault is how long the leader lease lasts without a
	// renewal: after a leader dies, another process fires in its place
	// within about this long.
	LeaderLeaseDefault = 10 * time.Second
	// ScheduleMinIntervalDefault is the shortest gap between two instants
	// of a schedule that ScheduleSave accepts.
	ScheduleMinIntervalDefault = time.Second
)

// scheduleConfig holds the schedule options; zero fields take defaults.
type scheduleConfig struct {
	tick   time.Duration
	lease  time.Duration
	minGap time.Duration
	off    bool
}

func (c scheduleConfig) tickOrDefault() time.Duration {
	if c.tick == 0 {
		return ScheduleTickDefault
	}
	return c.tick
}

func (c scheduleConfig) leaseOrDefault() time.Duration {
	if c.lease == 0 {
		return LeaderLeaseDefault
	}
	return c.lease
}

func (c scheduleConfig) minInterval() time.Duration {
	if c.minGap == 0 {
		return ScheduleMinIntervalDefault
	}
	return c.minGap
}

// WithScheduleTick sets how often the schedule leader looks for due
// schedules when none is due sooner (it wakes for the earliest next
// instant it knows of), and how often a process that is not the leader
// tries for the lease. Defaults to ScheduleTickDefault. Below IntervalMin
// is an error.
func WithScheduleTick(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithScheduleTick", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.sched.tick = d
	}
}

// WithLeaderLease sets how long the schedule leader's lease lasts without
// a renewal. The leader renews it every tick and stops firing on its own
// clock once four fifths of it have passed since its last renewal was
// sent, so it has given up before the lease can expire and another process
// take over. Defaults to LeaderLeaseDefault. Below LeaseDurationMin is an
// error.
func WithLeaderLease(d time.Duration) Option {
	return func(c *config) {
		if d < LeaseDurationMin {
			c.reject("WithLeaderLease", d.String(), "must be at least LeaseDurationMin ("+LeaseDurationMin.String()+")")
			return
		}
		c.sched.lease = d
	}
}

// WithScheduleMinInterval sets the shortest gap between two instants of a
// schedule that ScheduleSave accepts. Defaults to
// ScheduleMinIntervalDefault. Zero and negative are errors.
func WithScheduleMinInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.reject("WithScheduleMinInterval", d.String(), "must be positive")
			return
		}
		c.sched.minGap = d
	}
}

// WithoutScheduleLeader keeps Run from leading schedules: this process
// works on tasks and never fires a schedule. Its schedule methods still
// work.
func WithoutScheduleLeader() Option { return func(c *config) { c.sched.off = true } }
