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
	// and task, descending), and the cursor of the next page. A page may
	// hold fewer letters than the limit (even none) and still carry a
	// cursor: the filters are a bounded read (see [DeadLetterListParams]).
	DeadLetterList(ctx context.Context, params *DeadLetterListParams) (*DeadLetterListResult, error)
	// DeadLetterPurge removes the named letters from the lists; a letter
	// that is not listed (purged already, or its run gone) is skipped. It
	// touches no other letter, of this run or another.
	DeadLetterPurge(ctx context.Context, params *DeadLetterPurgeParams) (*DeadLetterPurgeResult, error)
}

// DeadLetterPageMax is the largest page DeadLetterList answers.
const DeadLetterPageMax = 1000

// DeadLetterReadMax bounds the letters a store may read past a page's
// limit in one call, per index it reads (a Redis shard's dead-letter
// index): a filter that matches few letters leaves the page short, with a
// cursor to read on from.
const DeadLetterReadMax = 1000

// DeadLetterListParams are the arguments of [DeadLetterStore.DeadLetterList].
// Every filter left empty matches everything; set filters combine with AND.
//
// No filter but RunID has an index: the others are applied to the letters
// read from the store's dead-letter index, newest first, and a call reads
// at most Limit + 1 + [DeadLetterReadMax] of them per index (per shard on
// Redis; a store's documentation gives its own bound). A page a filter left
// short, even empty, then carries a cursor; the listing is over when the
// cursor is empty. RunID reads the run's own list, whole (at most its
// tasks).
type DeadLetterListParams struct {
	// RunID keeps the letters of one run; empty lists every run's.
	RunID string
	// Workflow and Task keep letters of that workflow and task name.
	Workflow string
	Task     string
	// Tenant and Service keep letters of runs submitted for that tenant
	// and service; each may be given alone.
	Tenant  string
	Service string
	// Queue keeps letters of tasks of that queue (the queue the task was
	// sent to, without the capabilities it requires); Handler those of
	// that handler.
	Queue   string
	Handler string
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
	// Tenant and Service are the run's, empty when it was submitted
	// without them; they are read from the run when the letter is listed.
	Tenant  string
	Service string
	// Queue is the queue the task was sent to (without the capabilities
	// it requires) and Handler the handler that runs it.
	Queue   string
	Handler string
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
	// NextCursor is the cursor of the next page; empty when this one is
	// the last. It is set on a short page too when the call's bounded read
	// stopped before the end of the letters.
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
	return checkDeadLetterCursor(p.Cursor)
}

// checkDeadLetterCursor reports whether c is empty or a cursor as
// DeadLetterList makes them: the check of every dead-letter read that
// takes one.
func checkDeadLetterCursor(c string) error {
	if c == "" {
		return nil
	}
	_, _, err := ParseDeadLetterCursor(c)
	return err
}

// DeadLetterCursor is the cursor after the letter l: its time in ms and
// its "<run> <task>" key, the order DeadLetterList pages in.
func DeadLetterCursor(l DeadLetter) string {
	return DeadLetterCursorAt(l.At.UnixMilli(), l.RunID+" "+l.Task)
}

// DeadLetterCursorAt is the cursor after the position (atMs, key) of
// DeadLetterList's order, key being "<run> <task>": the cursor of a page
// that a bounded read ended at a letter its filters left out.
func DeadLetterCursorAt(atMs int64, key string) string {
	return strconv.FormatInt(atMs, 10) + ":" + key
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
		p.Tenant != "" && l.Tenant != p.Tenant,
		p.Service != "" && l.Service != p.Service,
		p.Queue != "" && l.Queue != p.Queue,
		p.Handler != "" && l.Handler != p.Handler,
		p.ErrorPrefix != "" && !strings.HasPrefix(l.Error, p.ErrorPrefix),
		!p.Since.IsZero() && l.At.Before(p.Since),
		!p.Until.IsZero() && !l.At.Before(p.Until):
		return false
	}
	return true
}
