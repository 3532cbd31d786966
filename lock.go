package plait

import "github.com/plaitdag/plait/store"

// Leases and fencing as a handler sees them. Every claim takes a lease with
// a fencing epoch; every write made for the attempt carries it, and the
// store refuses a write whose epoch has moved on ([ErrStaleEpoch]). A
// handler whose lease is lost has its context cancelled with
// [ErrLeaseLost]. The attempt's (run, task, attempt, epoch) are on its
// [Task], and [Task.IdempotencyKey] names what stays the same across
// attempts.

// Lease is a claim's lease: the task it holds, its fencing epoch and its
// deadline. See [store.Lease].
type Lease = store.Lease
