// Package action is the one way plait's operator tools act on a store: the
// web view (package inspector) and the plait command both name an [Action]
// and a [Target], ask [Count] for the dry run, and call [Apply].
//
// A target is one item, a selection (ids, run/task pairs or dead-letter
// refs) or a query (a [plait.RunFilter] for runs, a [DeadLetterFilter] for
// letters). Count and Apply resolve a target the same way, through one
// function, so the dry-run count is what Apply then acts on, as long as
// the store does not change in between. Apply paces itself (items per
// second, on a clock a test can fake), records the reason as a run note on
// every run it touches (where the store keeps notes) and writes one audit
// record per call.
package action

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/plaitdag/plait"
)

// Action names what is done. Its text is the form the JSON API and the
// command use ("run.cancel").
type Action string

// The actions. Each acts on one kind of item (see [Action.Kind]).
const (
	// RunCancel cancels a run's unfinished tasks (Scheduler.RunCancel).
	// It acts on runs not yet finished.
	RunCancel Action = "run.cancel"
	// RunReplay replays the failed, dead, cancelled and skipped tasks of a
	// finished run (Scheduler.RunReplay at its current generation), or
	// the named tasks of a selection of run/task pairs. It acts on
	// finished runs that hold such a task.
	RunReplay Action = "run.replay"
	// RunDelete deletes finished runs (Scheduler.RunDeleteMany, or
	// RunDelete one by one on a store without it).
	RunDelete Action = "run.delete"
	// RunNote adds the reason as a note to each run's history and
	// changes nothing else.
	RunNote Action = "run.note"
	// DeadLetterRequeue sends dead letters' tasks back to their queue
	// (Scheduler.DeadLetterRequeue), grouped by run.
	DeadLetterRequeue Action = "dead_letter.requeue"
	// DeadLetterPurge removes dead letters from the lists
	// (Scheduler.DeadLetterPurge); their runs stay.
	DeadLetterPurge Action = "dead_letter.purge"
	// TaskRunNow makes a task waiting on a delay, a run-at or a retry
	// backoff ready now (Scheduler.TaskRunNow).
	TaskRunNow Action = "task.run_now"
	// TaskSkip skips a task that has not started its attempt
	// (Scheduler.TaskSkip).
	TaskSkip Action = "task.skip"
	// TaskCancel cancels one unfinished task, a running one too
	// (Scheduler.TaskCancel).
	TaskCancel Action = "task.cancel"
	// QueuePause and QueueResume pause and resume queues by name.
	QueuePause  Action = "queue.pause"
	QueueResume Action = "queue.resume"
	// NodeDrain asks nodes to stop claiming and finish what they hold.
	NodeDrain Action = "node.drain"
	// SchedulePause and ScheduleResume pause and resume schedules by name.
	SchedulePause  Action = "schedule.pause"
	ScheduleResume Action = "schedule.resume"
	// ScheduleTrigger fires schedules once now.
	ScheduleTrigger Action = "schedule.trigger"
	// ScheduleBackfill fires schedules at each instant they would have
	// fired at from [Target].From to [Target].To, both included.
	ScheduleBackfill Action = "schedule.backfill"
)

// Actions lists every action, in the order above.
var Actions = []Action{
	RunCancel, RunReplay, RunDelete, RunNote,
	DeadLetterRequeue, DeadLetterPurge,
	TaskRunNow, TaskSkip, TaskCancel,
	QueuePause, QueueResume, NodeDrain,
	SchedulePause, ScheduleResume, ScheduleTrigger, ScheduleBackfill,
}

// Kind is what an action's items are.
type Kind string

// The kinds of items.
const (
	KindRun        Kind = "run"         // a run id
	KindTask       Kind = "task"        // a run/task pair
	KindDeadLetter Kind = "dead_letter" // a dead letter (run/task pair)
	KindQueue      Kind = "queue"       // a queue name
	KindNode       Kind = "node"        // a node id
	KindSchedule   Kind = "schedule"    // a schedule name
)

// Kind answers the kind of item a acts on, "" for an unknown action.
func (a Action) Kind() Kind {
	switch a {
	case RunCancel, RunReplay, RunDelete, RunNote:
		return KindRun
	case DeadLetterRequeue, DeadLetterPurge:
		return KindDeadLetter
	case TaskRunNow, TaskSkip, TaskCancel:
		return KindTask
	case QueuePause, QueueResume:
		return KindQueue
	case NodeDrain:
		return KindNode
	case SchedulePause, ScheduleResume, ScheduleTrigger, ScheduleBackfill:
		return KindSchedule
	}
	return ""
}

// Valid reports whether a is one of [Actions].
func (a Action) Valid() bool { return a.Kind() != "" }

// Parse answers the action named s, or an error wrapping
// [ErrInvalidArgument].
func Parse(s string) (Action, error) {
	a := Action(s)
	if !a.Valid() {
		return "", invalid("unknown action %q", s)
	}
	return a, nil
}

// Ref names one task of one run: a task action's item, a dead letter, or
// a task of a run to replay.
type Ref struct {
	RunID string `json:"runId"`
	Task  string `json:"task"`
}

// DeadLetterFilter selects dead letters, as [plait.DeadLetterListParams]
// without its paging.
type DeadLetterFilter struct {
	RunID       string
	Workflow    string
	Task        string
	Tenant      string
	Service     string
	Queue       string
	Handler     string
	ErrorPrefix string
	// ErrorKey, when not empty, keeps the letters whose error's group key
	// ([plait.DeadLetterErrorKey]) is it: the letters of one group of
	// DeadLetterGroups. The store lists by the other fields; the key is
	// checked letter by letter.
	ErrorKey string
	Since    time.Time
	Until    time.Time
}

// Target is what an action acts on: exactly one of IDs, Refs, Runs or
// DeadLetters.
type Target struct {
	// IDs are run ids (run actions), queue names, node ids or schedule
	// names: one item or a selection.
	IDs []string
	// Refs are run/task pairs: the items of a task or dead-letter action,
	// or the tasks to replay of a run.replay selection.
	Refs []Ref
	// Runs is a query for a run action: every run the filter matches
	// (read as RunList pages it, up to [QueryMax] runs).
	Runs *plait.RunFilter
	// DeadLetters is a query for a dead-letter action: every letter the
	// filter matches (read as DeadLetterList pages it, up to
	// [QueryMax]).
	DeadLetters *DeadLetterFilter
	// From and To are the range of a schedule.backfill, both included.
	From, To time.Time
	// Generation, when set, is the generation a run.replay of one run
	// replays from (the one the caller read): a replay sent twice then
	// opens one generation. Unset, each run replays from its current
	// generation.
	Generation *int64
}

// IsQuery reports whether t is a query (Runs or DeadLetters): such an
// action needs a reason.
func (t Target) IsQuery() bool { return t.Runs != nil || t.DeadLetters != nil }

// Bounds of a call.
const (
	// QueryMax is the most items a query resolves to; past it [Count]
	// answers Capped and Apply refuses.
	QueryMax = 100_000
	// QueryReadMax bounds what a query reads: past this many runs or
	// letters read (the pages of a filter the store answers by reading
	// entries one by one may be short), Count answers Capped and Apply
	// refuses. Narrow the filter then.
	QueryReadMax = 1_000_000
	// SelectionMax is the most ids or refs one target names.
	SelectionMax = 10_000
	// RateDefault is the pace of Apply, in items per second, when
	// Options.Rate is 0.
	RateDefault = 50
	// RateMax is the fastest pace Apply takes; a higher Options.Rate is
	// an error.
	RateMax = 1000
	// ReasonMax is the longest reason, in bytes (a run note holds 1 KiB
	// with the action's name).
	ReasonMax = 900
)

// CountResult is the dry run of an action: how many items Apply would act on.
type CountResult struct {
	// N is the number of items.
	N int `json:"count"`
	// Capped reports that the query matched more than [QueryMax] items
	// (N is then QueryMax), or read [QueryReadMax] entries before its
	// end: Apply refuses such a target.
	Capped bool `json:"capped"`
	// Skipped is the number of a selection's items the action does not
	// apply to now (unknown, or in another state); a query keeps only
	// the items it applies to.
	Skipped int `json:"skipped"`
}

// Options steer [Apply].
type Options struct {
	// Reason says why; required for a query and for run.note, at most
	// [ReasonMax] bytes.
	// Each run acted on gets it as a run note, and the audit record
	// carries it.
	Reason string
	// Actor names who acts (a user, "cli:alice"); it goes in the audit
	// record and the notes.
	Actor string
	// Rate is how many items per second Apply acts on, at most
	// [RateMax]; 0 takes [RateDefault].
	Rate float64
	// Max refuses (with a *[TooManyError]) a target of more items; 0 is
	// [QueryMax].
	Max int
	// Clock paces Apply; nil is the wall clock.
	Clock plait.Clock
	// Progress, when set, is called after each item with the items done
	// (acted on or failed) and the total.
	Progress func(done, total int)
	// Logger receives the audit record (at Info); nil is slog.Default().
	Logger *slog.Logger
}

// Item is the outcome for one item of an action.
type Item struct {
	// ID is the run id, queue, node or schedule name; RunID and Task name
	// a task or a dead letter instead.
	ID    string `json:"id,omitempty"`
	RunID string `json:"runId,omitempty"`
	Task  string `json:"task,omitempty"`
	// Err is why the action failed on this item; nil when it was done.
	Err error `json:"-"`
	// Runs are the runs a schedule.trigger or backfill created.
	Runs []string `json:"runs,omitempty"`

	gen   int64    // a run's generation as resolved (run.replay)
	tasks []string // a run.replay selection's tasks of the run
}

// Report is what [Apply] did.
type Report struct {
	Action Action `json:"action"`
	// Total is the number of items the target resolved to; Done those
	// acted on, Failed those that answered an error (see Items).
	Total  int    `json:"total"`
	Done   int    `json:"done"`
	Failed int    `json:"failed"`
	Items  []Item `json:"items"`
	// Skipped are the selection's items left out, each with why
	// (ErrNotFound, ErrNotApplicable).
	Skipped []Item `json:"skipped,omitempty"`
	// Noted is the number of run notes written; NotesUnsupported tells
	// the store keeps none.
	Noted            int  `json:"noted"`
	NotesUnsupported bool `json:"notesUnsupported,omitempty"`
	// NoteErrors is the number of notes the store failed to write.
	NoteErrors int `json:"noteErrors,omitempty"`
}

// Errors.
var (
	// ErrInvalidArgument is the category of a bad action, target or
	// option (also plait.ErrInvalidArgument).
	ErrInvalidArgument = plait.ErrInvalidArgument
	// ErrReasonRequired is answered by Apply for a query, or a run.note,
	// without a reason; it wraps ErrInvalidArgument.
	ErrReasonRequired = fmt.Errorf("%w: a query action needs a reason", ErrInvalidArgument)
	// ErrNotApplicable is why a selection's item is left out: its state
	// is not one the action applies to (a finished run to cancel, a
	// running task to skip). It wraps ErrInvalidArgument.
	ErrNotApplicable = fmt.Errorf("%w: the action does not apply", ErrInvalidArgument)
)

// TooManyError is Apply's refusal of a target larger than Options.Max.
type TooManyError struct {
	Count CountResult
	Max   int
}

func (e *TooManyError) Error() string {
	n := "at least " + itoa(e.Count.N)
	if !e.Count.Capped {
		n = itoa(e.Count.N)
	}
	return "action: the target holds " + n + " items, more than the " + itoa(e.Max) + " allowed"
}

func itoa(n int) string { return strconv.Itoa(n) }

// invalid answers an error wrapping ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf("action: %w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
