package store

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// WorkflowSpec is a workflow definition as data. It is stored with each run,
// so any worker process can run any run.
type WorkflowSpec struct {
	Name     string
	Strategy ErrorStrategy
	Tasks    []TaskSpec
}

// TaskSpec is one task of a workflow as data. Task options write into it.
type TaskSpec struct {
	Name     string
	Handler  string
	Payload  []byte
	Deps     []Dep
	Join     Join
	Retry    RetryPolicy
	Timeout  time.Duration
	Priority Priority
	Queue    string
	Requires []string
	// RunAt, when set, is the earliest time the task may start.
	RunAt time.Time
	// Delay, when set, is how long after the run is created the task may
	// start, on the store's clock.
	Delay time.Duration
	// Limits hold the task back while others sharing a key run or started
	// recently (see [TaskLimit] and [Limiter]).
	Limits []TaskLimit
}

// Dep is one incoming edge: the task depends on Task under condition On.
type Dep struct {
	Task string
	On   Condition
}

// Condition says which outcome of a parent satisfies a dependency edge.
type Condition uint8

// String returns the condition's name.
func (c Condition) String() string {
	switch c {
	case OnSuccess:
		return "success"
	case OnCompletion:
		return "completion"
	case OnFailure:
		return "failure"
	}
	return fmt.Sprintf("condition(%d)", uint8(c))
}

// Met reports whether a parent that ended in status parent satisfies an
// edge with condition c, under the run's error strategy. Under
// [StrategySkip] a failed or dead parent counts as skipped. A cancelled or
// unfinished parent satisfies nothing. Stores use this one table to release
// children, so every backend agrees.
func (c Condition) Met(parent TaskStatus, strategy ErrorStrategy) bool {
	if strategy == StrategySkip && (parent == TaskFailed || parent == TaskDead) {
		parent = TaskSkipped
	}
	switch c {
	case OnSuccess:
		return parent == TaskSucceeded
	case OnFailure:
		return parent == TaskFailed || parent == TaskDead
	case OnCompletion:
		switch parent {
		case TaskSucceeded, TaskFailed, TaskDead, TaskSkipped:
			return true
		}
	}
	return false
}

// Join says how a task combines its dependency edges.
type Join uint8

// String returns the join's name.
func (j Join) String() string {
	if j == JoinAny {
		return "any"
	}
	return "all"
}

// ErrorStrategy says what a run does when one of its tasks fails for good.
type ErrorStrategy string

// BackoffKind picks the delay curve between attempts.
type BackoffKind uint8

// RetryPolicy says how often and how soon a failed task runs again. A zero
// field takes the scheduler's default (see [WithDefaultRetry]).
//
// Attempts are counted the same way everywhere: [Retry](n) allows n
// retries, so n+1 attempts in all, and MaxAttempts is that total. Lost
// leases (crashes) and shutdown releases never count against it.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts in all, the first included:
	// Retry(n) sets it to n+1, and 1 means no retry. Zero takes the
	// default.
	MaxAttempts int
	Backoff     BackoffKind
	// InitialInterval is the first delay (the only one, for constant).
	InitialInterval time.Duration
	// MaxInterval caps the exponential delay.
	MaxInterval time.Duration
	// Multiplier is the exponential growth factor.
	Multiplier float64
	// Jitter randomises each delay by ±Jitter×delay; negative means none.
	Jitter float64
	// MaxElapsed stops retrying once this much time has passed since the
	// first attempt started; zero means no limit.
	MaxElapsed time.Duration
}

// String prints the policy compactly.
func (p RetryPolicy) String() string {
	kind := "exponential"
	if p.Backoff == BackoffConstant {
		kind = "constant"
	}
	return fmt.Sprintf("%s attempts=%d initial=%s max=%s", kind, p.MaxAttempts, p.InitialInterval, p.MaxInterval)
}

// Validate reports why the policy cannot be used: a negative setting, an
// unknown backoff kind, a NaN, or a jitter above 1.
func (p RetryPolicy) Validate() error {
	if p.MaxAttempts < 0 || p.InitialInterval < 0 || p.MaxInterval < 0 || p.MaxElapsed < 0 || p.Multiplier < 0 {
		return errors.New("negative retry setting")
	}
	if p.Backoff != BackoffExponential && p.Backoff != BackoffConstant {
		return fmt.Errorf("unknown backoff kind %d", p.Backoff)
	}
	if math.IsNaN(p.Multiplier) || math.IsNaN(p.Jitter) {
		return errors.New("retry setting is not a number")
	}
	if p.Jitter > 1 {
		return errors.New("jitter above 1")
	}
	return nil
}

// Priority orders ready tasks: a ready urgent task is claimed before a ready
// high one, and so on. Within a priority, tasks go oldest first.
// The zero value is PriorityNormal.
type Priority int8

// DefaultQueue is the queue tasks go to unless [OnQueue] names another.
const DefaultQueue = "default"

// ClaimOrder returns the priorities in the order a claim serves them.
func ClaimOrder() []Priority { return append([]Priority(nil), priorities[:]...) }

// String returns the priority's name.
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	case PriorityUrgent:
		return "urgent"
	}
	return fmt.Sprintf("priority(%d)", int8(p))
}

// Valid reports whether p is one of the four priorities.
func (p Priority) Valid() bool { return p >= PriorityLow && p <= PriorityUrgent }

// Priorities lists every priority, highest first: the claim order.
var priorities = [...]Priority{PriorityUrgent, PriorityHigh, PriorityNormal, PriorityLow}

const (
	// OnSuccess is satisfied when the parent succeeded (the default).
	OnSuccess Condition = iota
	// OnCompletion is satisfied by any finished parent: succeeded, failed,
	// dead or skipped.
	OnCompletion
	// OnFailure is satisfied when the parent failed or died; use it for
	// cleanup and compensation. Under [StrategySkip] a failed parent counts
	// as skipped, so an OnFailure edge is never satisfied there.
	OnFailure
)

const (
	// JoinAll waits until every edge is satisfied; the task is skipped as
	// soon as one edge cannot be (the default).
	JoinAll Join = iota
	// JoinAny starts on the first satisfied edge; the task is skipped when
	// every edge finished unsatisfied.
	JoinAny
)

const (
	// StrategyContinue lets independent branches go on; dependents of the
	// failed task follow their conditions (OnSuccess dependents are skipped,
	// OnFailure ones run). The run ends failed. This is the default.
	StrategyContinue ErrorStrategy = "continue"
	// StrategyStop fails fast: the run fails at once, tasks that have not
	// started are cancelled and running handlers' contexts are cancelled.
	StrategyStop ErrorStrategy = "stop"
	// StrategySkip tolerates failures: a failed task counts as skipped for
	// its dependents, and the run still completes. A dependent of a failed
	// task therefore never runs through that edge, an [AfterFailure] one
	// included (it is skipped); only [AfterCompletion] dependents, or an
	// [AnyOf] join with another satisfied edge, go on.
	StrategySkip ErrorStrategy = "skip"
)

const (
	// BackoffExponential grows the delay by Multiplier each attempt, with
	// jitter (the default).
	BackoffExponential BackoffKind = iota
	// BackoffConstant waits InitialInterval between attempts, with jitter.
	BackoffConstant
)

// Priorities, lowest first.
const (
	PriorityLow    Priority = -1
	PriorityNormal Priority = 0
	PriorityHigh   Priority = 1
	PriorityUrgent Priority = 2
)
