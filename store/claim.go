package store

// The arguments and answers of a claim: what a worker asks for and the
// leased tasks it gets back.

import (
	"time"
)

// TaskClaimParams are the arguments of [Store.TaskClaim].
type TaskClaimParams struct {
	// WorkerID names the claiming worker; it is recorded on the task.
	WorkerID string
	// Queues lists the queues to claim from; empty means [DefaultQueue].
	Queues []string
	// Limit is the most tasks to claim; it must be at least 1.
	Limit int
	// LeaseDuration is how long the claim holds without an extension.
	LeaseDuration time.Duration
	// RequestID, when set, makes the claim safe to send again: for as long
	// as the lease lasts, a claim (or a TaskFinishClaim) with the same
	// RequestID claims nothing new and answers the tasks the first one
	// claimed that are still held under its leases, and a TaskFinishClaim
	// answers its outcomes as the first call applied them. A caller whose
	// call failed without an answer sends it again with the same RequestID
	// to learn what it holds, so a lost reply never leaves tasks held by
	// nobody. Each new claim needs a new RequestID (at most 64 bytes of
	// [A-Za-z0-9._-]); empty means no such memory.
	RequestID string
	// Handlers, when not nil, lists the handler names the claimer can run;
	// a store implementing [ClaimRouter] hands out no task whose handler is
	// not listed and sets it aside for a claimer that lists it (see
	// [ClaimRouter]). Nil means any handler; other stores ignore it.
	Handlers []string
	// Shares, when not nil, holds one count per priority level, urgent
	// first (the order of [ClaimOrder]): a store implementing
	// [FairClaimer] first takes up to Shares[i] tasks of each level i, in
	// that order, then fills what is left of Limit in strict priority
	// order. Nil claims in strict priority order.
	Shares []int
	// InlineResultsMax, when positive, leaves the parents out of the answer
	// for a task with more parents than it, their names (Spec.Deps) and
	// their results: the task comes with ParentResultsDeferred set, and its
	// worker reads the results it wants ([ResultStore], with ParentsOf), so
	// that picking up a wide join carries neither thousands of names nor
	// their results. Zero answers every task with its parents and their
	// results.
	InlineResultsMax int
}

// TaskClaimResult is the answer of [Store.TaskClaim].
type TaskClaimResult struct {
	// Tasks are the claimed tasks, highest priority first.
	Tasks []*ClaimedTask
	// NextDueAt is when the earliest delayed task on the queues becomes
	// due, or the zero time when none is waiting. Idle workers use it to
	// wake up without polling.
	NextDueAt time.Time
	// Now is the store's clock at the claim.
	Now time.Time
}

// ClaimedTask is a task handed to a worker by [Store.TaskClaim], with
// everything the worker needs to run it without another round trip.
type ClaimedTask struct {
	// Lease identifies the attempt; every later write carries it.
	Lease Lease
	// LeaseUntil is the lease deadline on the store's clock.
	LeaseUntil time.Time
	// Spec is the task's definition as submitted, but for its Deps when
	// ParentResultsDeferred is set.
	Spec TaskSpec
	// Attempt counts attempts against the retry budget, from 1. A crash
	// re-run or a release keeps the attempt number.
	Attempt int
	// FirstStartedAt is when the task was first claimed.
	FirstStartedAt time.Time
	// ParentResults holds the results of the parents that succeeded, by
	// task name, unless ParentResultsDeferred is set.
	ParentResults map[string][]byte
	// ParentResultsDeferred is set when the claim left the parents out
	// (TaskClaimParams.InlineResultsMax): Spec.Deps is empty, and the
	// parents' results are read from a [ResultStore] with
	// [TaskResultsParams].ParentsOf.
	ParentResultsDeferred bool
	// Workflow, Tenant, Service and Metadata are those of the task's run,
	// as submitted, for the handler to see (see [Task.Run]). Tasks of one
	// run claimed together may share one Metadata map: it is read-only.
	Workflow string
	Tenant   string
	Service  string
	Metadata map[string]string
}

// Lease identifies one attempt of one task: the fencing token of plait.
type Lease struct {
	RunID string
	Task  string
	Epoch int64
}
