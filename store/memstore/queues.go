package memstore

import (
	"container/heap"
	"time"

	"github.com/plaitdag/plait/store"
)

// numPriorities is the number of ready FIFOs per queue.
const numPriorities = 4

// prioIndex maps a priority to its FIFO slot, urgent first.
func prioIndex(p store.Priority) int {
	switch p {
	case store.PriorityUrgent:
		return 0
	case store.PriorityHigh:
		return 1
	case store.PriorityLow:
		return 3
	}
	return 2
}

// queue is one named queue: a ready FIFO per priority, a delayed heap, and
// the tasks claims set aside for want of their handler, by handler.
type queue struct {
	ready   [numPriorities]fifo
	delayed delayHeap
	aside   map[string]*fifo
	// stale counts the tasks cancelled while they waited in the queue
	// since it was last compacted (dropStaleLocked).
	stale int
}

// entry points at a task queued at sequence seq; it is stale once the task
// was queued again or left its waiting status (lazy deletion).
type entry struct {
	t   *task
	seq uint64
}

// live reports whether e's task is still ready under this entry.
func (e entry) live() bool { return e.t.status == store.TaskReady && e.t.qseq == e.seq }

// fifoKeep is the most entries a drained FIFO keeps room for: the array of
// a larger backlog is let go once it has been claimed.
const fifoKeep = 1024

// fifo is a slice-backed first-in first-out queue of entries.
type fifo struct {
	items []entry
	head  int
}

func (f *fifo) push(e entry) { f.items = append(f.items, e) }

// pushFront puts e at the head.
func (f *fifo) pushFront(e entry) {
	if f.head > 0 {
		f.head--
		f.items[f.head] = e
		return
	}
	f.items = append([]entry{e}, f.items...)
}

// peek drops stale entries at the head and returns the first live one.
func (f *fifo) peek() (entry, bool) {
	for f.head < len(f.items) {
		e := f.items[f.head]
		if e.live() {
			return e, true
		}
		f.drop()
	}
	return entry{}, false
}

// len is the number of entries, stale ones included.
func (f *fifo) len() int { return len(f.items) - f.head }

// compact drops every stale entry, into an array of the size left.
func (f *fifo) compact() {
	var live []entry
	for _, e := range f.items[f.head:] {
		if e.live() {
			live = append(live, e)
		}
	}
	f.items, f.head = live, 0
}

// drop removes the head entry.
func (f *fifo) drop() {
	f.items[f.head] = entry{}
	f.head++
	switch {
	case f.head == len(f.items):
		f.items = f.items[:0]
		if cap(f.items) > fifoKeep {
			f.items = nil
		}
		f.head = 0
	case f.head >= 1024 && f.head*2 >= len(f.items):
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items = f.items[:n]
		f.head = 0
	}
}

// delayed is one waiting task with its due time.
type delayed struct {
	due time.Time
	entry
}

// live reports whether the task still waits for this due time.
func (d delayed) live() bool {
	s := d.t.status
	return d.t.qseq == d.seq && (s == store.TaskPending || s == store.TaskRetrying)
}

// delayHeap is a min-heap of delayed tasks by due time, then queue order.
type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	n := len(old) - 1
	d := old[n]
	old[n] = delayed{}
	*h = old[:n]
	return d
}

// peek drops stale entries at the top and returns the earliest live one.
func (h *delayHeap) peek() (delayed, bool) {
	for len(*h) > 0 {
		if d := (*h)[0]; d.live() {
			return d, true
		}
		heap.Pop(h)
	}
	return delayed{}, false
}

// leaseHeap is an indexed min-heap of running tasks by lease deadline;
// each task knows its position, so a finish removes it and an extension
// fixes it in place.
type leaseHeap []*task

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].leaseUntil.Before(h[j].leaseUntil) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].leaseIdx = i
	h[j].leaseIdx = j
}
func (h *leaseHeap) Push(x any) {
	t := x.(*task)
	t.leaseIdx = len(*h)
	*h = append(*h, t)
}
func (h *leaseHeap) Pop() any {
	old := *h
	n := len(old) - 1
	t := old[n]
	old[n] = nil
	t.leaseIdx = -1
	*h = old[:n]
	return t
}

// holdLocked puts t under a lease until until, or moves its deadline.
func (s *Store) holdLocked(t *task, until time.Time) {
	t.leaseUntil = until
	if t.leaseIdx >= 0 {
		heap.Fix(&s.leases, t.leaseIdx)
		return
	}
	heap.Push(&s.leases, t)
	s.held.hold(t)
	// a new lease is a claim: its event carries the epoch, attempt and
	// worker the claim has just set (events.go).
	s.taskEventLocked(t, store.TaskReady, t.claimedAt)
}

// unholdLocked drops t's lease.
func (s *Store) unholdLocked(t *task) {
	if t.leaseIdx >= 0 {
		heap.Remove(&s.leases, t.leaseIdx)
		s.held.unhold(t)
	}
	t.leaseUntil = time.Time{}
}

// makeReadyLocked puts t in its ready FIFO now, queued now.
func (s *Store) makeReadyLocked(t *task, now time.Time) error {
	if err := s.setTaskStatusLocked(t, store.TaskReady, now); err != nil {
		return err
	}
	t.queuedAt = now
	t.qseq = s.nextSeqLocked()
	t.asideFor = ""
	s.queueFor(t.route).ready[prioIndex(t.spec().Priority)].push(entry{t: t, seq: t.qseq})
	s.notifyLocked()
	return nil
}

// returnLocked puts t back at the head of its ready FIFO, the place it was
// claimed from, keeping the time it was queued.
func (s *Store) returnLocked(t *task, now time.Time) error {
	if err := s.setTaskStatusLocked(t, store.TaskReady, now); err != nil {
		return err
	}
	t.qseq = s.nextSeqLocked()
	t.asideFor = ""
	s.queueFor(t.route).ready[prioIndex(t.spec().Priority)].pushFront(entry{t: t, seq: t.qseq})
	s.notifyLocked()
	return nil
}

// delayLocked parks t in its queue's delayed heap until due, keeping its
// status, and wakes waiters so they learn the new NextDueAt.
func (s *Store) delayLocked(t *task, due time.Time) {
	t.qseq = s.nextSeqLocked()
	t.due = due
	t.queuedAt = due
	heap.Push(&s.queueFor(t.route).delayed, delayed{due: due, entry: entry{t: t, seq: t.qseq}})
	s.notifyLocked()
}

// scheduleLocked makes t due at due: ready when due <= now, delayed otherwise.
func (s *Store) scheduleLocked(t *task, due, now time.Time) error {
	if due.After(now) {
		s.delayLocked(t, due)
		return nil
	}
	return s.makeReadyLocked(t, now)
}

// promoteLocked moves at most limit due delayed tasks of q to ready.
func (s *Store) promoteLocked(q *queue, now time.Time, limit int) {
	for ; limit > 0; limit-- {
		d, ok := q.delayed.peek()
		if !ok || d.due.After(now) {
			return
		}
		heap.Pop(&q.delayed)
		// peek returned a live entry, so the move is legal; an error would
		// leave the task where it is, which is all a claim can do about it.
		_ = s.makeReadyLocked(d.t, now)
		// queued when it came due, not when a claim came by
		d.t.queuedAt = d.due
	}
}

func (s *Store) nextSeqLocked() uint64 {
	s.seq++
	return s.seq
}

// dropStaleLocked counts t, just cancelled while it waited in its queue
// (ready, set aside or delayed), and drops every stale entry of the queue
// once they may be half of it. A claim drops the stale entries it meets,
// but a queue nobody claims from, or a due time far ahead, would keep a
// cancelled task, and with it its run, long after the run is freed. A
// compaction costs the entries left, fewer than twice the cancels since
// the last one. A task held back by a limit waits on its key, not in the
// queue: counting it only brings the compaction nearer.
func (s *Store) dropStaleLocked(t *task) {
	q := s.queues[t.route]
	if q == nil {
		return
	}
	q.stale++
	n := len(q.delayed)
	for i := range q.ready {
		n += q.ready[i].len()
	}
	for _, f := range q.aside {
		n += f.len()
	}
	if q.stale*2 < n {
		return
	}
	q.stale = 0
	for i := range q.ready {
		q.ready[i].compact()
	}
	for h, f := range q.aside {
		if f.compact(); f.len() == 0 {
			delete(q.aside, h)
		}
	}
	var live delayHeap
	for _, d := range q.delayed {
		if d.live() {
			live = append(live, d)
		}
	}
	q.delayed = live
	heap.Init(&q.delayed)
}
