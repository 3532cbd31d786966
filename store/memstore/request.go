package memstore

import (
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// requestIDMax bounds a claim's RequestID.
const requestIDMax = 64

// memo is what one claim with a RequestID did, kept for its lease so the
// same call sent again answers the same.
type memo struct {
	id       string
	until    time.Time
	leases   []store.Lease
	finished []store.TaskFinishResult
}

// checkRequestID validates a claim's RequestID; empty is allowed.
func checkRequestID(id string) error {
	if id == "" {
		return nil
	}
	if len(id) > requestIDMax || ids.Check(id) != nil {
		return fmt.Errorf("memstore: claim request id of %d bytes, want at most %d of [A-Za-z0-9._-]: %w", len(id), requestIDMax, store.ErrInvalidArgument)
	}
	return nil
}

// recallLocked returns the memo of a RequestID still within its lease,
// forgetting memos whose lease is over.
func (s *Store) recallLocked(id string, now time.Time) *memo {
	s.forgetMemosLocked(now)
	if id == "" {
		return nil
	}
	m := s.memos[id]
	if m != nil && !m.until.After(now) {
		return nil
	}
	return m
}

// forgetMemosLocked forgets the memos whose lease is over: at each claim,
// and as runs are freed (expireLocked), so a store no longer claimed from
// keeps none past its lease.
func (s *Store) forgetMemosLocked(now time.Time) {
	n := 0
	for ; n < len(s.memoOrder); n++ {
		m := s.memoOrder[n]
		if m.until.After(now) {
			break
		}
		if s.memos[m.id] == m {
			delete(s.memos, m.id)
			s.memos = shrunk(s.memos, &s.peak.memos)
		}
	}
	s.memoOrder = dropFront(s.memoOrder, n)
}

// rememberLocked keeps what a claim with a RequestID did until its lease
// ends.
func (s *Store) rememberLocked(id string, until time.Time, claimed *store.TaskClaimResult, finished []store.TaskFinishResult) {
	if id == "" {
		return
	}
	m := &memo{id: id, until: until, finished: finished}
	if claimed != nil && len(claimed.Tasks) > 0 {
		m.leases = make([]store.Lease, 0, len(claimed.Tasks))
		for _, ct := range claimed.Tasks {
			m.leases = append(m.leases, ct.Lease)
		}
	}
	if s.memos == nil {
		s.memos = map[string]*memo{}
	}
	s.memos[id] = m
	s.memoOrder = append(s.memoOrder, m)
}

// replayLocked answers a claim sent again: the tasks of the first answer
// that its leases still hold, as they are now, and nothing claimed anew.
func (s *Store) replayLocked(m *memo, now time.Time, inline int) *store.TaskClaimResult {
	res := &store.TaskClaimResult{Now: now}
	for _, l := range m.leases {
		t, err := s.leasedLocked(l)
		if err != nil {
			continue
		}
		res.Tasks = append(res.Tasks, s.claimedLocked(t, t.leaseUntil, inline))
	}
	return res
}
