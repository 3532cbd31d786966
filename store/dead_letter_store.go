package store

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
	// Cursor is the NextCursor of the previous page; empty starts at the
	// newest.
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
	// NextCursor is the cursor of the next page; empty when this one is the last.
	NextCursor string
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
