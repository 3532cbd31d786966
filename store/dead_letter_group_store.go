package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// DeadLetterGroupStore is the capability of answering the dead letters
// grouped by error: which failures there are, how many of each, since
// when, with one letter of each to look at. It groups a window of the
// letters DeadLetterList would list with the same filters, the newest
// first, so its answer is exact for that window and says whether the
// window reached every letter. Both shipped stores implement it.
type DeadLetterGroupStore interface {
	// DeadLetterGroups groups the newest params.Window letters matching
	// the filters, after params.Cursor, by [DeadLetterErrorKey] of their
	// error. It reads what DeadLetterList reads for a page of
	// params.Window letters: at most Window + 1 + [DeadLetterReadMax]
	// letters per index (see [DeadLetterListParams]).
	DeadLetterGroups(ctx context.Context, params *DeadLetterGroupsParams) (*DeadLetterGroupsResult, error)
}

// DeadLetterGroupsWindowMax is the largest window DeadLetterGroups groups
// in one call.
const DeadLetterGroupsWindowMax = 10000

// DeadLetterGroupKeyMax is the longest group key in bytes; a longer first
// line is cut (at a character boundary).
const DeadLetterGroupKeyMax = 200

// DeadLetterGroupsParams are the arguments of
// [DeadLetterGroupStore.DeadLetterGroups]. The filters are those of
// [DeadLetterListParams], with the same meaning and the same bounded read.
type DeadLetterGroupsParams struct {
	RunID       string
	Workflow    string
	Task        string
	Tenant      string
	Service     string
	Queue       string
	Handler     string
	ErrorPrefix string
	Since       time.Time
	Until       time.Time
	// Cursor is the NextCursor of the previous call (a dead-letter
	// cursor): the window starts after it. Empty starts at the newest.
	Cursor string
	// Window is how many letters one call groups, at most: 1 to
	// [DeadLetterGroupsWindowMax].
	Window int
}

// DeadLetterGroup is the letters of one group key in the window.
type DeadLetterGroup struct {
	// Key is [DeadLetterErrorKey] of the letters' errors.
	Key string
	// Count is the number of letters of the window with this key.
	Count int
	// Oldest and Newest are the earliest and latest time a letter of the
	// group was dead-lettered.
	Oldest time.Time
	Newest time.Time
	// Sample is the newest letter of the group.
	Sample DeadLetter
}

// DeadLetterGroupsResult is the answer of [DeadLetterGroupStore.DeadLetterGroups].
type DeadLetterGroupsResult struct {
	// Groups are the window's groups, the largest first (then the one
	// with the newest letter, then by key). Their counts add up to
	// Letters.
	Groups []DeadLetterGroup
	// Letters is the number of letters the window holds.
	Letters int
	// Truncated reports that the window did not reach every matching
	// letter: Window of them were grouped, or the call's bounded read
	// stopped first. NextCursor then goes on from where it stopped.
	Truncated  bool
	NextCursor string
}

// Validate reports whether the parameters are usable: a window in range and
// a cursor as DeadLetterList makes them.
func (p *DeadLetterGroupsParams) Validate() error {
	if p.Window < 1 || p.Window > DeadLetterGroupsWindowMax {
		return fmt.Errorf("plait: dead letter group window of %d, want 1..%d: %w", p.Window, DeadLetterGroupsWindowMax, ErrInvalidArgument)
	}
	return checkDeadLetterCursor(p.Cursor)
}

// ListParams are the list parameters of the groups' window: the same
// filters and cursor, and the window as the limit (which may pass
// [DeadLetterPageMax]: a store reads the window with its list's code, not
// through DeadLetterList).
func (p *DeadLetterGroupsParams) ListParams() DeadLetterListParams {
	return DeadLetterListParams{RunID: p.RunID, Workflow: p.Workflow, Task: p.Task, Tenant: p.Tenant, Service: p.Service,
		Queue: p.Queue, Handler: p.Handler, ErrorPrefix: p.ErrorPrefix, Since: p.Since, Until: p.Until,
		Cursor: p.Cursor, Limit: p.Window}
}

// DeadLetterErrorKey is the group key of an error: its first line (up to
// the first '\n', spaces around it trimmed) in which every word holding a
// digit is replaced by '#', a word being a longest run of ASCII letters,
// digits, '_' and '-'; the key is then cut to [DeadLetterGroupKeyMax]
// bytes. So numbers, ids, UUIDs, hex hashes, addresses and durations fall
// out: "dial tcp 10.0.0.7:6379: i/o timeout after 30s" is
// "dial tcp #.#.#.#:#: i/o timeout after #". An empty error is the key "".
func DeadLetterErrorKey(err string) string {
	line, _, _ := strings.Cut(err, "\n")
	line = strings.TrimSpace(line)
	var b strings.Builder
	for i := 0; i < len(line); {
		j := i
		digit := false
		for j < len(line) && isWordByte(line[j]) {
			if line[j] >= '0' && line[j] <= '9' {
				digit = true
			}
			j++
		}
		switch {
		case j == i:
			b.WriteByte(line[i])
			j++
		case digit:
			b.WriteByte('#')
		default:
			b.WriteString(line[i:j])
		}
		i = j
		if b.Len() >= DeadLetterGroupKeyMax {
			break
		}
	}
	key := b.String()
	if len(key) > DeadLetterGroupKeyMax {
		// cut before the character the limit falls in
		n := DeadLetterGroupKeyMax
		for n > 0 && !utf8.RuneStart(key[n]) {
			n--
		}
		key = key[:n]
	}
	return key
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// GroupDeadLetters answers the groups of a window of letters, listed as
// DeadLetterList lists them (newest first) with the list's next cursor:
// the one grouping both shipped stores use, so they answer alike.
func GroupDeadLetters(letters []DeadLetter, nextCursor string) *DeadLetterGroupsResult {
	res := &DeadLetterGroupsResult{Groups: []DeadLetterGroup{}, Letters: len(letters), NextCursor: nextCursor, Truncated: nextCursor != ""}
	at := map[string]int{}
	for _, l := range letters {
		k := DeadLetterErrorKey(l.Error)
		i, ok := at[k]
		if !ok {
			// letters come newest first: the first of a key is its sample
			at[k] = len(res.Groups)
			res.Groups = append(res.Groups, DeadLetterGroup{Key: k, Count: 1, Oldest: l.At, Newest: l.At, Sample: l})
			continue
		}
		g := &res.Groups[i]
		g.Count++
		if l.At.Before(g.Oldest) {
			g.Oldest = l.At
		}
		if l.At.After(g.Newest) {
			g.Newest = l.At
		}
	}
	sort.SliceStable(res.Groups, func(i, j int) bool {
		a, b := &res.Groups[i], &res.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if !a.Newest.Equal(b.Newest) {
			return a.Newest.After(b.Newest)
		}
		return a.Key < b.Key
	})
	return res
}
