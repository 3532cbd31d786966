package store

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// QueueLister is the capability of listing every queue the store knows:
// each queue that has or had tasks, a queue no process serves (a typo'd
// OnQueue, say) included, with what waits on it and what runs from it.
// Both shipped stores implement it.
//
// The store keeps a registry of queue names that the transitions write
// when a queue's ready list or delayed set goes from empty to non-empty
// (on Redis one SADD per shard then, and a comparison of the push's reply
// otherwise; on memstore the map of queues itself), so listing costs no
// scan. A queue stays registered once it had tasks.
type QueueLister interface {
	// QueueList answers one page of queues by name, ascending, and the
	// cursor of the next page. A routed queue ([RoutedQueue]:
	// "render+gpu") is listed as its own entry, right after its plain
	// queue, with the capabilities it requires. It changes nothing.
	//
	// Bounds per call, per shard: the registry (one read), per queue of
	// the page a count of each ready list, the delayed set and the set-
	// aside lists, the first [QueueOldestScan] entries of each ready list
	// and the first delayed entry; and the first [QueueRunningScan] leases
	// for the running counts.
	QueueList(ctx context.Context, params *QueueListParams) (*QueueListResult, error)
}

// QueueListPageMax is the largest page QueueList answers.
const QueueListPageMax = 1000

// QueueOldestScan is how many entries at the head of each ready list a
// store reads for [QueueInfo].OldestReadyAt.
const QueueOldestScan = 8

// QueueRunningScan is how many running tasks (leases) per shard a store
// reads to count [QueueInfo].Running; beyond, the counts are those of the
// leases read and [QueueListResult].RunningCapped is set.
const QueueRunningScan = 1000

// QueueListParams are the arguments of [QueueLister.QueueList].
type QueueListParams struct {
	// Cursor is the NextCursor of the previous page: the name of the last
	// queue listed. Empty starts at the first name.
	Cursor string
	// Limit is the page size, 1 to QueueListPageMax.
	Limit int
}

// Validate reports whether the parameters are usable: a limit in range
// and a cursor that is a queue name. The error wraps [ErrInvalidArgument].
func (p *QueueListParams) Validate() error {
	if p.Limit < 1 || p.Limit > QueueListPageMax {
		return fmt.Errorf("plait: queue page of %d, want 1..%d: %w", p.Limit, QueueListPageMax, ErrInvalidArgument)
	}
	if p.Cursor != "" {
		if _, _, ok := SplitRoutedQueue(p.Cursor); !ok {
			return fmt.Errorf("plait: queue cursor %s: %w", ids.Quote(p.Cursor), ErrInvalidArgument)
		}
	}
	return nil
}

// Page answers the page p asks of a store's registered queue names, given
// in any order and with repeats (the union of per-shard registries): the
// names after the cursor, ascending, at most Limit of them, and the
// cursor of the next page, empty when this one is the last. It is the one
// paging both shipped stores use, so they page alike.
func (p *QueueListParams) Page(names iter.Seq[string]) (page []string, nextCursor string) {
	for n := range names {
		if n > p.Cursor {
			page = append(page, n)
		}
	}
	slices.Sort(page)
	page = slices.Compact(page)
	if len(page) > p.Limit {
		page = page[:p.Limit]
		nextCursor = page[len(page)-1]
	}
	return page, nextCursor
}

// QueueListResult is the answer of [QueueLister.QueueList].
type QueueListResult struct {
	Queues []QueueInfo
	// NextCursor is the cursor of the next page; empty when this page is
	// the last.
	NextCursor string
	// RunningCapped reports that a shard held more than
	// [QueueRunningScan] leases: the Running counts are those of the
	// leases read, fewer than the tasks running.
	RunningCapped bool
}

// QueueInfo is what waits on one queue and what runs from it.
type QueueInfo struct {
	// Name is the queue as tasks are kept on it: Queue, or Queue and the
	// capabilities its tasks require ([RoutedQueue]).
	Name string
	// Queue is the queue the tasks were submitted to ([OnQueue]), and
	// Requires the capabilities they require (nil for a plain queue).
	Queue    string
	Requires []string
	// Urgent, High, Normal and Low count the ready tasks per priority,
	// Ready their sum. On Redis, entries of a cancelled run's tasks are
	// counted until a claim meets and drops them (lazy deletion).
	Urgent, High, Normal, Low int
	Ready                     int
	// Delayed counts the tasks waiting out a run-at time, a delay or a
	// retry's backoff, whether due or not (a claim moves the due ones).
	Delayed int
	// Running counts the tasks of the queue held under a lease now.
	Running int
	// SetAside counts the ready tasks a claim set aside for want of their
	// handler (see [WaitingForHandler]); they are not in Ready.
	SetAside int
	// Limited counts the ready tasks held back by the queue's own limit
	// ([QueueLimitKey], the key WithQueueLimit puts on a queue's tasks),
	// waiting for a slot; they are not in Ready. The key is the queue's,
	// routed or not, so it is counted on the entry of the plain queue
	// only. A task held back by another limit key waits on that key and
	// counts in no queue.
	Limited int
	// OldestReadyAt is when the oldest task that could be claimed now
	// became ready: the earliest ready time of the live entries among the
	// first [QueueOldestScan] of each priority's list (a list is mostly in
	// ready order: a due delayed task moved to ready by a claim comes in
	// behind tasks that became ready after its due time), and the due
	// time of the earliest delayed task that is due. Zero when nothing is
	// ready or due.
	OldestReadyAt time.Time
	// Paused reports that Queue is paused for the fleet
	// ([NodeStore.QueuePause]); false on a store without NodeStore.
	Paused bool
}
