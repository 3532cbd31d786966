package memstore

import "github.com/plaitdag/plait/store"

// evStatus is the status an event record carries, in one byte instead of
// a string's sixteen: a task's or a run's, as the record's kind says.
type evStatus uint8

// The task statuses take the codes from 1, the run statuses from 16; 0
// is none.
const (
	evTaskPending evStatus = 1 + iota
	evTaskReady
	evTaskRunning
	evTaskRetrying
	evTaskSucceeded
	evTaskFailed
	evTaskSkipped
	evTaskCancelled
	evTaskDead
)

const (
	evRunPending evStatus = 16 + iota
	evRunRunning
	evRunCompleted
	evRunFailed
	evRunCancelled
)

// taskEvStatus is the code of a task status.
func taskEvStatus(st store.TaskStatus) evStatus {
	switch st {
	case store.TaskPending:
		return evTaskPending
	case store.TaskReady:
		return evTaskReady
	case store.TaskRunning:
		return evTaskRunning
	case store.TaskRetrying:
		return evTaskRetrying
	case store.TaskSucceeded:
		return evTaskSucceeded
	case store.TaskFailed:
		return evTaskFailed
	case store.TaskSkipped:
		return evTaskSkipped
	case store.TaskCancelled:
		return evTaskCancelled
	case store.TaskDead:
		return evTaskDead
	}
	return 0
}

// runEvStatus is the code of a run status.
func runEvStatus(st store.RunStatus) evStatus {
	switch st {
	case store.RunPending:
		return evRunPending
	case store.RunRunning:
		return evRunRunning
	case store.RunCompleted:
		return evRunCompleted
	case store.RunFailed:
		return evRunFailed
	case store.RunCancelled:
		return evRunCancelled
	}
	return 0
}

// task is the task status of code c.
func (c evStatus) task() store.TaskStatus {
	switch c {
	case evTaskPending:
		return store.TaskPending
	case evTaskReady:
		return store.TaskReady
	case evTaskRunning:
		return store.TaskRunning
	case evTaskRetrying:
		return store.TaskRetrying
	case evTaskSucceeded:
		return store.TaskSucceeded
	case evTaskFailed:
		return store.TaskFailed
	case evTaskSkipped:
		return store.TaskSkipped
	case evTaskCancelled:
		return store.TaskCancelled
	case evTaskDead:
		return store.TaskDead
	}
	return ""
}

// run is the run status of code c.
func (c evStatus) run() store.RunStatus {
	switch c {
	case evRunPending:
		return store.RunPending
	case evRunRunning:
		return store.RunRunning
	case evRunCompleted:
		return store.RunCompleted
	case evRunFailed:
		return store.RunFailed
	case evRunCancelled:
		return store.RunCancelled
	}
	return ""
}
