package memstore

import "github.com/plaitdag/plait/store"

// runCounts holds the number of runs in each status, one slot per status
// of [store.RunStatuses]: a run's move costs two array writes instead of
// two lookups (and at times a delete) in a map keyed by the status text,
// which every claim and finish of a single-task run paid.
type runCounts [numRunStatuses]int64

// numRunStatuses is how many run statuses there are.
const numRunStatuses = 5

// runStatusSlot is the slot of st in runCounts; false for a status not
// of the machine (the empty one of a run being created).
func runStatusSlot(st store.RunStatus) (int, bool) {
	switch st {
	case store.RunPending:
		return 0, true
	case store.RunRunning:
		return 1, true
	case store.RunCompleted:
		return 2, true
	case store.RunFailed:
		return 3, true
	case store.RunCancelled:
		return 4, true
	}
	return 0, false
}

// add moves the count of st by n.
func (c *runCounts) add(st store.RunStatus, n int64) {
	if i, ok := runStatusSlot(st); ok {
		c[i] += n
	}
}

// each calls fn with every status that has runs, and their number, in
// the order of the status machine.
func (c *runCounts) each(fn func(store.RunStatus, int64)) {
	for _, st := range store.RunStatuses() {
		if i, _ := runStatusSlot(st); c[i] != 0 {
			fn(st, c[i])
		}
	}
}
