package memstore

import "github.com/plaitdag/plait/store"

// indexedRun is the task count from which a run keeps a map from task
// name to index. A smaller run finds a name by comparing it with each
// task's: no map to build at its creation or to keep, and on the hot
// path (each finish looks its task up by name) a compare of the task the
// call touches anyway instead of a hash and a lookup in memory of its own.
const indexedRun = 5

// find returns the index of the task called name in r, and whether r has
// one; 0 when it does not, as a lookup in the map would answer.
func (r *run) find(name string) (int, bool) {
	if r.index != nil {
		i, ok := r.index[name]
		return i, ok
	}
	for i := range r.tasks {
		if r.tasks[i].inst.Name == name {
			return i, true
		}
	}
	return 0, false
}

// indexOf is find's index alone, for a name the run is known to have.
func (r *run) indexOf(name string) int {
	i, _ := r.find(name)
	return i
}

// specIndex finds name in the task specs of a run being built, before
// its tasks are: the index when the run keeps one, else a scan.
func specIndex(r *run, tasks []store.TaskSpec, name string) (int, bool) {
	if r.index != nil {
		i, ok := r.index[name]
		return i, ok
	}
	for i := range tasks {
		if tasks[i].Name == name {
			return i, true
		}
	}
	return 0, false
}
