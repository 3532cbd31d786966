package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// TaskSearchStore is the capability of finding tasks across runs by
// status, queue, handler, node, tenant and service: "what is running, on
// which node, until when", "what waits on this queue", "what failed for
// this tenant". Both shipped stores implement it.
//
// It reads what the transitions keep, in five sections, each in an order
// of its own that a cursor can resume:
//
//  1. running: the lease set of each shard, by lease deadline (the most
//     overdue first), then "<run> <task>";
//  2. ready: per queue of the registry (see [QueueLister]), by name, the
//     ready lists urgent to low, the set-aside lists by handler, then the
//     tasks held back by the queue's own limit ([QueueLimitKey]), each
//     from its head;
//  3. retrying: per queue, the delayed set, by due time;
//  4. failed and dead: the dead-letter index, by the time the task was
//     dead-lettered (a purged letter is no longer found);
//  5. pending, succeeded, skipped and cancelled: through the run indexes,
//     the runs newest first (by creation, then id, descending), each run's
//     tasks in definition order.
//
// Shards are read one after another within a section. A ready task held
// back by a limit key other than its queue's waits on the key, not on a
// queue, and is not listed.
//
// Filters: Statuses picks the sections read. Queue is index-backed for
// the ready and retrying sections (only that queue's lists and delayed
// sets are read), Tenant and Service for the fifth (the run index of the
// service, or of the service and tenant); every other filter, and these
// in the other sections, is a bounded read: one call examines at most
// [TaskSearchScan] + Limit entries (tasks, or runs in the fifth section)
// and, when that budget runs out before the page is full, answers the
// hits found so far with a NextCursor that resumes after the last entry
// examined, so a page may hold fewer hits than Limit (none even) and still
// have a next one. Each list read is at most that long too.
//
// Paging while tasks move: a cursor is a position in a section's order,
// not an offset. A task that moves to a later section between two pages
// (ready to running is not one: running comes first) may be seen twice,
// and one that moves to an earlier section is not seen in its new status;
// a list's head being claimed does not shift the positions after it (the
// cursor names the last entry read: when it has left the list, so has
// every entry before it, and the list is read from its head). A task
// given back to the head of its ready list (a claim released unstarted,
// a slot of its limit freed) may be seen twice. Runs created after the
// first page are newer than every cursor in the fifth section: not seen on
// a shard already read, seen on one not yet read.
type TaskSearchStore interface {
	// TaskSearch answers one page of tasks matching params and the cursor
	// of the next page. It changes nothing.
	TaskSearch(ctx context.Context, params *TaskSearchParams) (*TaskSearchResult, error)
}

// TaskSearchPageMax is the largest page TaskSearch answers.
const TaskSearchPageMax = 1000

// TaskSearchScan is how many entries beyond the page size one
// TaskSearch call examines at most.
const TaskSearchScan = 1000

// TaskSearchParams are the arguments of [TaskSearchStore.TaskSearch].
// Every filter left empty matches everything.
type TaskSearchParams struct {
	// Statuses keeps tasks in one of these statuses; empty means every
	// status.
	Statuses []TaskStatus
	// Queue keeps tasks submitted to this queue (routed or not: the
	// queue of [TaskSpec], not [RoutedQueue]'s name).
	Queue string
	// Handler keeps tasks of this handler.
	Handler string
	// Node keeps tasks whose latest claim was made by this node
	// ([TaskInstance].Node).
	Node string
	// Tenant and Service keep tasks of runs of this tenant and service;
	// each works alone.
	Tenant  string
	Service string
	// Cursor is the NextCursor of the previous page; empty starts at the
	// first section.
	Cursor string
	// Limit is the page size, 1 to TaskSearchPageMax.
	Limit int
}

// Validate reports whether the parameters are usable: known statuses,
// valid names, a limit in range and a cursor as TaskSearch makes them.
// The error wraps [ErrInvalidArgument].
func (p *TaskSearchParams) Validate() error {
	if p.Limit < 1 || p.Limit > TaskSearchPageMax {
		return fmt.Errorf("plait: task search page of %d, want 1..%d: %w", p.Limit, TaskSearchPageMax, ErrInvalidArgument)
	}
	for _, st := range p.Statuses {
		if TaskSearchSection(st) == 0 {
			return fmt.Errorf("plait: task search status %s: %w", ids.Quote(string(st)), ErrInvalidArgument)
		}
	}
	for _, f := range [...]struct{ name, v string }{{"queue", p.Queue}, {"handler", p.Handler}, {"node", p.Node}, {"tenant", p.Tenant}, {"service", p.Service}} {
		if f.v != "" && ids.Check(f.v) != nil {
			return fmt.Errorf("plait: task search %s %s: %w", f.name, ids.Quote(f.v), ErrInvalidArgument)
		}
	}
	if p.Cursor != "" {
		if _, err := ParseTaskSearchCursor(p.Cursor); err != nil {
			return err
		}
	}
	return nil
}

// Wants reports whether the params keep status st.
func (p *TaskSearchParams) Wants(st TaskStatus) bool {
	return len(p.Statuses) == 0 || slices.Contains(p.Statuses, st)
}

// WantsSection reports whether the params keep a status of section sec.
func (p *TaskSearchParams) WantsSection(sec int) bool {
	for _, st := range taskStatusesAll {
		if TaskSearchSection(st) == sec && p.Wants(st) {
			return true
		}
	}
	return false
}

var taskStatusesAll = [...]TaskStatus{TaskPending, TaskReady, TaskRunning, TaskRetrying, TaskSucceeded, TaskFailed, TaskSkipped, TaskCancelled, TaskDead}

// Sections of TaskSearch, in the order it reads them.
const (
	TaskSearchRunning  = 1
	TaskSearchReady    = 2
	TaskSearchRetrying = 3
	TaskSearchDead     = 4
	TaskSearchRuns     = 5
)

// TaskSearchSection answers the section tasks in status st are found in,
// 0 for an unknown status.
func TaskSearchSection(st TaskStatus) int {
	switch st {
	case TaskRunning:
		return TaskSearchRunning
	case TaskReady:
		return TaskSearchReady
	case TaskRetrying:
		return TaskSearchRetrying
	case TaskFailed, TaskDead:
		return TaskSearchDead
	case TaskPending, TaskSucceeded, TaskSkipped, TaskCancelled:
		return TaskSearchRuns
	}
	return 0
}

// TaskSearchResult is the answer of [TaskSearchStore.TaskSearch].
type TaskSearchResult struct {
	Tasks []TaskHit
	// NextCursor is the cursor of the next page; empty when this page is
	// the last.
	NextCursor string
}

// TaskHit is one task TaskSearch found: the task as RunGet has it, with
// its run's names and its queue.
type TaskHit struct {
	RunID    string
	Workflow string
	Tenant   string
	Service  string
	// Queue is the queue the task was submitted to and Priority its
	// priority.
	Queue    string
	Priority Priority
	TaskInstance
	// LeaseUntil is, for a running task, when its lease ends unless
	// extended: past it, the sweep gives the task to another worker.
	// Zero for a task in any other status.
	LeaseUntil time.Time
}

// TaskSearchPosition is a place in TaskSearch's order; the stores share
// it so that both make and read the same cursors.
type TaskSearchPosition struct {
	// Section is one of TaskSearchRunning ... TaskSearchRuns.
	Section int `json:"s"`
	// Shard is the shard of a store with several, read in order.
	Shard int `json:"h,omitempty"`
	// Queue is the registry name of the queue (ready and retrying
	// sections).
	Queue string `json:"q,omitempty"`
	// List is the ready list: "3" urgent to "0" low, "g" and a handler
	// for a set-aside list, "l" for the queue's limit.
	List string `json:"l,omitempty"`
	// Score is the lease deadline, due time or dead-letter time in ms,
	// the entry's index in its list when it was read (ready section), or
	// the run's creation (fifth section).
	Score int64 `json:"t,omitempty"`
	// Member is the entry "<run> <task>".
	Member string `json:"m,omitempty"`
}

// Cursor encodes p as a TaskSearch cursor.
func (p TaskSearchPosition) Cursor() string {
	b, _ := json.Marshal(p)
	return "t1." + base64.RawURLEncoding.EncodeToString(b)
}

// ParseTaskSearchCursor decodes a cursor made by [TaskSearchPosition.Cursor].
func ParseTaskSearchCursor(c string) (TaskSearchPosition, error) {
	var p TaskSearchPosition
	bad := fmt.Errorf("plait: task search cursor %s: %w", ids.Quote(c), ErrInvalidArgument)
	if len(c) < 3 || c[:3] != "t1." {
		return p, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(c[3:])
	if err != nil || json.Unmarshal(b, &p) != nil || p.Section < TaskSearchRunning || p.Section > TaskSearchRuns || p.Shard < 0 {
		return p, bad
	}
	return p, nil
}

// Matches reports whether hit h passes every filter of p.
func (p *TaskSearchParams) Matches(h *TaskHit) bool {
	return p.Wants(h.Status) &&
		(p.Queue == "" || h.Queue == p.Queue) &&
		(p.Handler == "" || h.Handler == p.Handler) &&
		(p.Node == "" || h.Node == p.Node) &&
		(p.Tenant == "" || h.Tenant == p.Tenant) &&
		(p.Service == "" || h.Service == p.Service)
}

// TaskSearchListRank orders the ready lists of a queue as TaskSearch
// reads them: "3" (urgent) to "0" (low), then the set-aside lists ("g"
// and the handler) by handler, then the queue's limit ("l").
func TaskSearchListRank(a, b string) int {
	rank := func(l string) int {
		if len(l) == 1 && l[0] >= '0' && l[0] <= '3' {
			return 3 - int(l[0]-'0')
		}
		return 4
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
