package memstore

import "github.com/plaitdag/plait/store"

// heldSlots is the number of slots of the held table: a power of two, a
// few times the tasks a busy store has running at once.
const heldSlots = 1024

// heldTable finds the running task a lease names without the runs map.
// A finish reaches its task microseconds after the claim, but the runs map
// of a store holding many runs does not stay in the processor's cache, and
// its lookup was the largest single cost of a finish. The table keeps each
// task under a lease in the slot of its run's number (the number in the
// run's id), and only while the lease holds: holdLocked sets the slot,
// unholdLocked clears it, so the table keeps no run alive. A lease whose
// slot holds another task (of a run whose number shares the slot, or
// another task of the same run) is looked up in the maps as before, and a
// lease the table finds is one the maps would have found: the same run,
// task and epoch, running.
type heldTable [heldSlots]*task

// slot returns where the tasks of the run numbered num are kept.
func (h *heldTable) slot(num uint64) **task { return &h[num&(heldSlots-1)] }

// hold keeps t, just put under a lease.
func (h *heldTable) hold(t *task) { *h.slot(t.run.num) = t }

// unhold forgets t, whose lease is dropped, if its slot holds it.
func (h *heldTable) unhold(t *task) {
	if p := h.slot(t.run.num); *p == t {
		*p = nil
	}
}

// find returns the running task l holds, or nil when the table does not
// know it; the caller then looks it up in the maps, which also tell why a
// lease holds nothing.
func (h *heldTable) find(l store.Lease) *task {
	num, ok := runNum(l.RunID)
	if !ok {
		return nil
	}
	t := *h.slot(num)
	if t == nil || t.run.num != num || t.epoch != l.Epoch || t.status != store.TaskRunning || t.inst.Name != l.Task {
		return nil
	}
	return t
}

// runNum returns the number a run id of this store spells (run.go writes
// it in decimal, with no leading zero), and false for a string that is not
// such an id: "07" names no run even though run 7 exists.
func runNum(id string) (uint64, bool) {
	if len(id) == 0 || len(id) > 19 || id[0] == '0' {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(id); i++ {
		c := id[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + uint64(c)
	}
	return n, true
}
