package store

// The arguments and answers of lease upkeep: extension, the sweep of
// expired leases, and the wait for ready work.

import (
	"time"
)

// LeaseExtendParams are the arguments of [Store.LeaseExtend].
type LeaseExtendParams struct {
	WorkerID string
	Leases   []Lease
	Duration time.Duration
}

// LeaseExtendResult is the answer for one lease of [Store.LeaseExtend].
type LeaseExtendResult struct {
	// Until is the new deadline when Err is nil.
	Until time.Time
	// Err is ErrStaleEpoch when the lease was lost, ErrNotFound when the
	// run is gone.
	Err error
}

// LeaseSweepParams are the arguments of [Store.LeaseSweep].
type LeaseSweepParams struct {
	// Limit bounds the work of one call.
	Limit int
	// CrashLimit is how many lost leases a task survives; the next one
	// makes it dead.
	CrashLimit int
}

// LeaseSweepResult is the answer of [Store.LeaseSweep].
type LeaseSweepResult struct {
	// Requeued are the leases recovered back to ready.
	Requeued []Lease
	// Dead are the leases whose task hit the crash limit.
	Dead []Lease
	// Corrupt describes records that could not be read and were skipped.
	Corrupt []string
	// More reports that Limit cut the sweep short.
	More bool
}

// ReadyWaitParams are the arguments of [Store.ReadyWait].
type ReadyWaitParams struct {
	Queues  []string
	Timeout time.Duration
	// Handlers, when not nil, are the handlers the caller runs: a store
	// implementing [ClaimRouter] also wakes it for a task a claim of
	// another caller set aside for want of one of them. Nil: as before.
	Handlers []string
}
