// Package memstore is the in-memory [store.Store]: every run, task and queue
// lives in maps behind one mutex, and each Store method holds that mutex for
// its whole step, so each method is one atomic transition exactly as the
// contract in docs/store-contract.md describes.
//
// A memstore suits tests, examples and single-process deployments; it keeps
// nothing across restarts. Time comes from the [store.Clock] given with
// [WithClock], so tests drive leases and due times with a fake clock.
package memstore

import (
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

	// queues holds the ready FIFOs and the delayed heap of each queue.
	queues map[string]*queue
	// limits holds the state of each limit key in use (keylimits.go).
	limits map[string]*keyLimit
	// rateWaits are the keys with tasks held back by a rate, by key: the
	// claim wakes those whose window moved on.
	rateWaits map[string]*keyLimit
	// rateExpiry orders the rate starts by when they leave their window.
	rateExpiry rateHeap
	// leases orders running tasks by lease deadline for the sweep.
	leases leaseHeap

	// wake is closed and replaced when work becomes ready and someone is
	// waiting on it (woken reports that a waiter took the channel).
	wake   chan struct{}
	waited bool

	// dead is the global dead-letter list, oldest first.
	dead []taskRef
	// replaying is set while RunReplay holds the lock: only then may a
	// status move out of a terminal one (status.go).
	replaying bool

	// retention is how long a finished run is kept unless a rule of
	// rules says otherwise; retain resolves them (built by New) and expiry
	// holds the finished runs, one list per distinct retention.
	retention time.Duration
	rules     []retentionRule
	retain    *retention.Table
	expiry    map[time.Duration]*expiryList
	// history, when longer than a run's retention, keeps its attempt
	// records past it (history.go): kept by run id, keptOrder in the
	// order they go.
	history   time.Duration
	kept      map[string]*keptHistory
	keptOrder []*keptHistory

	// indexes lists runs by service, tenant and workflow (query.go);
	// counts holds the number of runs in each status.
	indexes map[string]*runIndex
	counts  map[store.RunStatus]int64

	// memos remembers claims sent with a RequestID for their lease;
	// memoOrder holds them in the order they were made, and its front is
	// dropped once its lease is over.
	memos     map[string]*memo
	memoOrder []*memo

	// maxResult is the largest result a finish stores.
	maxResult int
	// logLines and logBytes cap each task's stored log lines (tasklog.go).
	logLines, logBytes int

	// ev is the event stream and st the counters (events.go, stats.go).
	ev eventLog
	st statsLog

	// sched holds the schedules and the leader lease (schedule.go).
	sched schedules
	// nodes holds the node registry and the paused queues (nodes.go).
	nodes nodes
}

// Option configures a [Store].
type Option func(*Store)

// WithClock makes the store read time from c instead of the system clock.
// A nil c keeps the system clock.
func WithClock(c store.Clock) Option {
	return func(s *Store) {
		if c != nil {
			s.clock = c
		}
	}
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{
		clock:     clock.Real{},
		runs:      make(map[string]*run),
		keys:      make(map[string]*run),
		queues:    make(map[string]*queue),
		wake:      make(chan struct{}),
		retention: RetentionDefault,
		expiry:    make(map[time.Duration]*expiryList),
		kept:      make(map[string]*keptHistory),
		indexes:   make(map[string]*runIndex),
		counts:    make(map[store.RunStatus]int64),
		maxResult: MaxResultBytesDefault,
		logLines:  TaskLogLinesDefault,
		logBytes:  TaskLogBytesDefault,
	}
	for _, o := range opts {
		o(s)
	}
	s.buildRetention()
	return s
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
