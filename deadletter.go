package plait

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DeadLetterStore is the capability of listing and purging dead letters:
// the tasks that failed for good (OutcomeFailed, or a retry budget used
// up) or died (lost their worker more often than the crash limit allows),
// across every run or in one, newest first. Purging removes letters from
// the lists; the runs and their tasks stay as they are. Both shipped
// stores implement it.
type DeadLetterStore interface {
	// DeadLetterList answers one page of dead letters matching params,
	// newest first (by the time the task was dead-lettered, then by run
	// and task, descending), and the cursor of the next page.
	DeadLetterList(ctx context.Context, params *DeadLetterListParams) (*DeadLetterListResult, error)
	// DeadLetterPurge removes the named letters from the lists; a letter
	// that is not listed (purged already, or its run gone) is skipped. It
	// touches no other letter, of this run or another.
	DeadLetterPurge(ctx context.Context, params *DeadLetterPurgeParams) (*DeadLetterPurgeResult, error)
}

// DeadLetterPageMax is the largest page DeadLetterList answers.
const DeadLetterPageMax = 1000

// DeadLetterListParams are the arguments of [DeadLetterStore.DeadLetterList].
// Every filter left empty matches everything.
type DeadLetterListParams struct {
	// RunID keeps the letters of one run; empty lists every run's.
	RunID string
	// Workflow and Task keep letters of that workflow and task name.
	Workflow string
	Task     string
	// ErrorPrefix keeps letters whose error starts with it.
	ErrorPrefix string
	// Since and Until keep letters dead-lettered at or after Since and
	// before Until; zero means no bound.
	Since time.Time
	Until time.Time
	// Cursor is the Next of the previous page; empty starts at the newest.
	Cursor string
	// Limit is the page size, 1 to DeadLetterPageMax.
	Limit int
}

// DeadLetter is one task that failed for good or died.
type DeadLetter struct {
	RunID    string
	Task     string
	Workflow string
	// Status is TaskFailed or TaskDead.
	Status TaskStatus
	// Error is the task's last error.
	Error string
	// At is when the task was dead-lettered, on the store's clock (ms).
	At time.Time
}

// DeadLetterListResult is the answer of [DeadLetterStore.DeadLetterList].
type DeadLetterListResult struct {
	Letters []DeadLetter
	// Next is the cursor of the next page; empty when this one is the last.
	Next string
}

// DeadLetterRef names one dead letter.
type DeadLetterRef struct {
	RunID string
	Task  string
}

// DeadLetterPurgeParams are the arguments of [DeadLetterStore.DeadLetterPurge].
type DeadLetterPurgeParams struct {
	Letters []DeadLetterRef
}

// DeadLetterPurgeResult is the answer of [DeadLetterStore.DeadLetterPurge].
type DeadLetterPurgeResult struct {
	// Purged counts the letters removed by this call.
	Purged int
}

// Validate reports whether the parameters are usable: a limit in range and
// a cursor as DeadLetterList makes them.
func (p *DeadLetterListParams) Validate() error {
	if p.Limit < 1 || p.Limit > DeadLetterPageMax {
		return fmt.Errorf("plait: dead letter page of %d, want 1..%d: %w", p.Limit, DeadLetterPageMax, ErrInvalidArgument)
	}
	if p.Cursor != "" {
		if _, _, err := ParseDeadLetterCursor(p.Cursor); err != nil {
			return err
		}
	}
	return nil
}

// DeadLetterCursor is the cursor after the letter l: its time in ms and
// its "<run> <task>" key, the order DeadLetterList pages in.
func DeadLetterCursor(l DeadLetter) string {
	return strconv.FormatInt(l.At.UnixMilli(), 10) + ":" + l.RunID + " " + l.Task
}

// ParseDeadLetterCursor splits a cursor made by DeadLetterCursor.
func ParseDeadLetterCursor(c string) (atMs int64, key string, err error) {
	ms, key, ok := strings.Cut(c, ":")
	n, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil || key == "" {
		return 0, "", fmt.Errorf("plait: dead letter cursor %s: %w", quote(c), ErrInvalidArgument)
	}
	return n, key, nil
}

// DeadLetterBefore reports whether a comes before b in DeadLetterList's
// order: newer first, then by "<run> <task>" descending.
func DeadLetterBefore(aMs int64, aKey string, bMs int64, bKey string) bool {
	if aMs != bMs {
		return aMs > bMs
	}
	return aKey > bKey
}

// Matches reports whether l passes the filters of p (not the cursor).
func (p *DeadLetterListParams) Matches(l *DeadLetter) bool {
	switch {
	case p.RunID != "" && l.RunID != p.RunID,
		p.Workflow != "" && l.Workflow != p.Workflow,
		p.Task != "" && l.Task != p.Task,
		p.ErrorPrefix != "" && !strings.HasPrefix(l.Error, p.ErrorPrefix),
		!p.Since.IsZero() && l.At.Before(p.Since),
		!p.Until.IsZero() && !l.At.Before(p.Until):
		return false
	}
	return true
}

// DeadLetters answers one page of dead letters, newest first. It returns
// an [*UnsupportedError] when the store does not implement
// [DeadLetterStore]; a Limit of 0 takes 100.
func (s *Scheduler) DeadLetters(ctx context.Context, params DeadLetterListParams) (*DeadLetterListResult, error) {
	d, err := capability[DeadLetterStore](s.store, "DeadLetterStore")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = 100
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return d.DeadLetterList(ctx, &params)
}

// DeadLetterDetail is what [Scheduler.InspectDeadLetter] answers: the
// task as RunGet has it (its last error, status and every attempt record)
// and the payload it was submitted with.
type DeadLetterDetail struct {
	TaskInstance
	// Payload is the task's encoded payload (decode it with the
	// scheduler's codec); nil when it had none, or when the store does not
	// implement [PayloadStore].
	Payload []byte
}

// InspectDeadLetter answers a dead letter's task: its last error, its
// status, every attempt record and its payload. ErrNotFound when the run
// or task is gone, or the task is not dead-lettered. Two store calls: the
// run, then the payload from a store with [PayloadStore].
func (s *Scheduler) InspectDeadLetter(ctx context.Context, runID, task string) (*DeadLetterDetail, error) {
	if _, err := capability[DeadLetterStore](s.store, "DeadLetterStore"); err != nil {
		return nil, err
	}
	run, err := s.store.RunGet(ctx, &RunGetParams{ID: runID})
	if err != nil {
		return nil, err
	}
	ti := run.Task(task)
	if ti == nil || (ti.Status != TaskFailed && ti.Status != TaskDead) {
		return nil, fmt.Errorf("plait: run %s task %s is not dead-lettered: %w", runID, quote(task), ErrNotFound)
	}
	out := &DeadLetterDetail{TaskInstance: *ti}
	if ps, err := capability[PayloadStore](s.store, "PayloadStore"); err == nil {
		res, err := ps.TaskPayloads(ctx, &TaskPayloadsParams{RunID: runID, Tasks: []string{task}})
		if err != nil {
			return nil, err
		}
		out.Payload = res.Payloads[task]
	}
	return out, nil
}

// PurgeDeadLetters removes the named letters from the dead-letter lists
// and answers how many it removed. It returns an [*UnsupportedError] when
// the store does not implement [DeadLetterStore].
func (s *Scheduler) PurgeDeadLetters(ctx context.Context, letters ...DeadLetterRef) (int, error) {
	d, err := capability[DeadLetterStore](s.store, "DeadLetterStore")
	if err != nil {
		return 0, err
	}
	res, err := d.DeadLetterPurge(ctx, &DeadLetterPurgeParams{Letters: letters})
	if err != nil {
		return 0, err
	}
	return res.Purged, nil
}
