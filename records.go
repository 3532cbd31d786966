package plait

import "github.com/plaitdag/plait/store"

// The records a store keeps of runs, tasks and attempts, re-exported from
// package store, where their fields are documented.
type (
	// Run is one execution of a workflow: see [store.Run].
	Run = store.Run
	// RunStatus is the status of a run: see [store.RunStatus].
	RunStatus = store.RunStatus
	// TaskInstance is one task of a run: see [store.TaskInstance].
	TaskInstance = store.TaskInstance
	// TaskStatus is the status of a task: see [store.TaskStatus].
	TaskStatus = store.TaskStatus
	// Attempt is the record of one attempt of a task: see [store.Attempt].
	Attempt = store.Attempt
	// TaskHistory is the attempts of one task: see [store.TaskHistory].
	TaskHistory = store.TaskHistory
)

// Run statuses.
const (
	RunPending   = store.RunPending
	RunRunning   = store.RunRunning
	RunCompleted = store.RunCompleted
	RunFailed    = store.RunFailed
	RunCancelled = store.RunCancelled
)

// Task statuses; [store.TaskStatus] says what each means.
const (
	TaskPending   = store.TaskPending
	TaskReady     = store.TaskReady
	TaskRunning   = store.TaskRunning
	TaskRetrying  = store.TaskRetrying
	TaskSucceeded = store.TaskSucceeded
	TaskFailed    = store.TaskFailed
	TaskSkipped   = store.TaskSkipped
	TaskCancelled = store.TaskCancelled
	TaskDead      = store.TaskDead
)
