package store

import (
	"context"
	"time"
)

// ScheduleStore is the capability of keeping schedules and electing the one
// process that fires them. Both shipped stores implement it; the
// [Scheduler]'s schedule methods answer an [*UnsupportedError] on a store
// that does not, and Run then fires nothing.
//
// The store keeps each schedule as an opaque definition (the Scheduler's
// encoding of its spec, time zone, policies and workflow) plus the state
// the leader moves: the next instant due, the last instant fired and the
// id of the last run. It indexes schedules by name and by next instant, so
// the leader finds due schedules without reading the others.
//
// A schedule fires exactly once per instant because the leader creates each
// run with a key made of the schedule's name and the instant (see
// [RunCreateParams].Key): the store's keyed create makes a second create of
// the same instant, from any process, answer the first run. The leader
// lease only keeps the work in one process; the fencing epoch it carries
// keeps a deposed leader from moving a schedule's state.
type ScheduleStore interface {
	// ScheduleSave creates the schedule named params.Name or replaces its
	// definition and next instant, keeping its last instant and last run
	// id, and bumps its version. It is idempotent: saving the same
	// definition again changes only the version.
	ScheduleSave(ctx context.Context, params *ScheduleSaveParams) (*ScheduleRecord, error)
	// ScheduleGet returns one schedule, or ErrNotFound.
	ScheduleGet(ctx context.Context, params *ScheduleGetParams) (*ScheduleRecord, error)
	// ScheduleList returns schedules by name, or, with DueBy set, those
	// whose next instant is at or before DueBy, earliest first.
	ScheduleList(ctx context.Context, params *ScheduleListParams) (*ScheduleListResult, error)
	// ScheduleDelete removes a schedule; ErrNotFound when there is none.
	// Runs it fired are not touched.
	ScheduleDelete(ctx context.Context, params *ScheduleDeleteParams) error
	// ScheduleRecordFire records what the leader did with a schedule: its
	// next instant, and the last instant fired and its run when it fired
	// one. It answers ErrStaleEpoch and changes nothing unless
	// params.LeaderEpoch is the epoch of the unexpired leader lease. When
	// the schedule was saved again since the leader read params.Version,
	// only the last instant and run are recorded: the new definition's
	// next instant stands.
	ScheduleRecordFire(ctx context.Context, params *ScheduleRecordFireParams) (*ScheduleRecord, error)
	// LeaderAcquire takes the store's leader lease for params.Holder when
	// it is free or expired, with a new epoch greater than every earlier
	// one, or renews it, keeping its epoch, when params.Holder already
	// holds it (so a holder whose acquire lost its reply gets its lease
	// back by asking again). Either way the lease lasts params.TTL from now
	// on the store's clock. When another holder has it, the answer has
	// Acquired false and that holder's lease. Holder names must be unique
	// per process: the Scheduler adds a random part to its worker id.
	LeaderAcquire(ctx context.Context, params *LeaderAcquireParams) (*LeaderAcquireResult, error)
	// LeaderRelease gives the lease up when params.Holder holds it under
	// params.Epoch, and does nothing otherwise.
	LeaderRelease(ctx context.Context, params *LeaderReleaseParams) error
}

// ScheduleRecord is a schedule as the store keeps it.
type ScheduleRecord struct {
	// Name identifies the schedule; it follows the id rules.
	Name string
	// Definition is opaque to the store.
	Definition []byte
	// NextFire is the next instant due; zero when none is (a paused
	// schedule, a one-time schedule already fired).
	NextFire time.Time
	// LastFire is the last instant fired, zero before the first.
	LastFire time.Time
	// LastRunID is the run of LastFire.
	LastRunID string
	// Version is bumped by every save; the leader passes the version it
	// read to ScheduleRecordFire.
	Version int64
	// UpdatedAt is the store's clock at the last save.
	UpdatedAt time.Time
}

// ScheduleSaveParams are the arguments of [ScheduleStore.ScheduleSave].
type ScheduleSaveParams struct {
	Name       string
	Definition []byte
	// NextFire is the next instant due, zero for none.
	NextFire time.Time
}

// ScheduleGetParams are the arguments of [ScheduleStore.ScheduleGet].
type ScheduleGetParams struct {
	Name string
}

// ScheduleListParams are the arguments of [ScheduleStore.ScheduleList].
type ScheduleListParams struct {
	// DueBy, when set, lists only schedules whose next instant is at or
	// before it, earliest first.
	DueBy time.Time
	// After, when DueBy is zero, lists names after it in byte order: the
	// cursor of the previous page.
	After string
	// Limit is the most records to return; it must be at least 1.
	Limit int
}

// ScheduleListResult is the answer of [ScheduleStore.ScheduleList].
type ScheduleListResult struct {
	Schedules []*ScheduleRecord
	// More reports that Limit cut the list short.
	More bool
}

// ScheduleDeleteParams are the arguments of [ScheduleStore.ScheduleDelete].
type ScheduleDeleteParams struct {
	Name string
}

// ScheduleRecordFireParams are the arguments of
// [ScheduleStore.ScheduleRecordFire].
type ScheduleRecordFireParams struct {
	Name string
	// LeaderEpoch fences the write: it must be the current lease's epoch.
	LeaderEpoch int64
	// Version is the schedule version the leader acted on.
	Version int64
	// NextFire is the next instant due, zero for none.
	NextFire time.Time
	// LastFire and LastRunID, when LastFire is set, are the instant fired
	// and its run.
	LastFire  time.Time
	LastRunID string
}

// LeaderAcquireParams are the arguments of [ScheduleStore.LeaderAcquire].
type LeaderAcquireParams struct {
	// Holder names the process (its worker id).
	Holder string
	// Epoch is the epoch the caller believes it holds, 0 for none; the
	// holder's name, not this, decides a renewal.
	Epoch int64
	// TTL is how long the lease lasts from now; at least a millisecond.
	TTL time.Duration
}

// LeaderAcquireResult is the answer of [ScheduleStore.LeaderAcquire].
type LeaderAcquireResult struct {
	// Acquired reports that Holder holds the lease now.
	Acquired bool
	// Lease is the lease as it stands: Holder's, or the other holder's.
	Lease LeaderLease
}

// LeaderLease is the store's one leader lease.
type LeaderLease struct {
	Holder string
	// Epoch grows with every new holder: the fencing token of the leader.
	Epoch int64
	// Until is the lease deadline on the store's clock.
	Until time.Time
}

// LeaderReleaseParams are the arguments of [ScheduleStore.LeaderRelease].
type LeaderReleaseParams struct {
	Holder string
	Epoch  int64
}
