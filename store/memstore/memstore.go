// Package memstore is the in-memory [store.Store]: every run, task and queue
// lives in maps behind one mutex, and each Store method holds that mutex for
// its whole step, so each method is one atomic transition exactly as the
// contract in docs/store-contract.md describes.
//
// A memstore suits tests, examples and single-process deployments; it keeps
// nothing across restarts. Time comes from the [store.Clock] given with
// [WithClock], so tests drive leases and due times with a fake clock.
//
// It takes the options [redisstore] takes, with the same meaning, the same
// defaults and the same bounds (package store holds them), so a program
// moves between the two stores without its options changing meaning.
//
// [redisstore]: https://pkg.go.dev/github.com/plaitdag/plait/store/redisstore
package memstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/retention"
	"github.com/plaitdag/plait/store"
)

// Store is an in-memory [store.Store]. The zero value is not usable; build
// one with [New]. A Store is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	clock store.Clock

	nextID uint64
	seq    uint64
	runs   map[string]*run
	keys   map[string]*run
	// answers supplies the claim answers (claim_answer.go).
	answers answers

	// queues holds the ready FIFOs and the delayed heap of each queue.
	queues map[string]*queue
	// limits holds the state of each limit key in use (keylimits.go).
	limits map[string]*keyLimit
	// admission holds the caps on pending tasks and their counts
	// (admission.go).
	admission admission
	// rateWaits are the keys with tasks held back by a rate, by key: the
	// claim wakes those whose window moved on.
	rateWaits map[string]*keyLimit
	// rateExpiry orders the rate starts by when they leave their window.
	rateExpiry rateHeap
	// leases orders running tasks by lease deadline for the sweep; held
	// finds them by lease (held.go).
	leases leaseHeap
	held   heldTable
	// parentsLeft is the ParentsLeft of the TaskFinishClaim under way:
	// the fewest parents a task its finishes left pending still waits on
	// (0: none), kept by releaseChildrenLocked.
	parentsLeft int

	// wake is closed and replaced when work becomes ready and someone is
	// waiting on it (woken reports that a waiter took the channel).
	wake   chan struct{}
	waited bool

	// dead is the global dead-letter list, oldest first; deadGone counts
	// its entries of freed runs, dropped once they are half of it.
	dead     []taskRef
	deadGone int
	// replaying is set while RunReplay holds the lock: only then may a
	// status move out of a terminal one (status.go).
	replaying bool

	// retain resolves the retention of a finished run from the options
	// (built by New) and expiry holds the finished runs, one list per
	// distinct retention.
	retain *retention.Table
	expiry map[time.Duration]*expiryList
	// kept holds the attempt records history retention keeps past their
	// run (history.go), by run id, keptOrder in the order they go.
	kept      map[string]*keptHistory
	keptOrder []*keptHistory

	// indexes lists runs by service, tenant and workflow (query.go);
	// counts holds the number of runs in each status.
	indexes map[string]*runIndex
	counts  runCounts
	// ended lists the finished runs by end time (query_end.go).
	ended endIndex

	// memos remembers claims sent with a RequestID for their lease;
	// memoOrder holds them in the order they were made, and its front is
	// dropped once its lease is over.
	memos     map[string]*memo
	memoOrder []*memo

	// peak holds the most entries each map that loses entries as runs go
	// held since it was built (shrink.go).
	peak struct{ runs, keys, kept, indexes, memos int }

	// cfg holds the settings the options gave, with their defaults.
	cfg config

	// ev is the event stream and st the counters (events.go, stats.go).
	ev eventLog
	st statsLog

	// sched holds the schedules and the leader lease (schedule.go).
	sched schedules
	// nodes holds the node registry and the paused queues (nodes.go).
	nodes nodes
}

// New returns an empty Store. Every option is checked: New reports each
// one out of range as a [*store.OptionError] (which matches
// [store.ErrInvalidOption]), all of them joined, and returns no store; a
// nil option is an error too.
func New(opts ...Option) (*Store, error) {
	var cfg config
	for i, o := range opts {
		if o == nil {
			cfg.errs = append(cfg.errs, fmt.Errorf("memstore: option %d is nil: %w", i, store.ErrInvalidOption))
			continue
		}
		o(&cfg)
	}
	if err := cfg.err(); err != nil {
		return nil, err
	}
	cfg.withDefaults()
	s := &Store{
		clock:   cfg.clock,
		cfg:     cfg,
		runs:    make(map[string]*run),
		keys:    make(map[string]*run),
		queues:  make(map[string]*queue),
		wake:    make(chan struct{}),
		expiry:  make(map[time.Duration]*expiryList),
		kept:    make(map[string]*keptHistory),
		indexes: make(map[string]*runIndex),
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	s.ev.cap = cfg.eventCap
	s.st.window = cfg.statsWindow
	s.buildRetention()
	return s, nil
}

// taskRef names one task of one run, for the dead-letter lists.
type taskRef struct {
	run  string
	task string
}

// queueFor returns the queue named name, creating it.
func (s *Store) queueFor(name string) *queue {
	q := s.queues[name]
	if q == nil {
		q = &queue{}
		s.queues[name] = q
	}
	return q
}

// notifyLocked wakes ReadyWait callers; called with mu held whenever a task
// becomes ready.
func (s *Store) notifyLocked() {
	if !s.waited {
		return
	}
	close(s.wake)
	s.wake = make(chan struct{})
	s.waited = false
}
