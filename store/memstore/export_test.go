package memstore

import (
	"fmt"
	"slices"
)

// Leftovers lists what s still holds of run id, for the Leftovers hook of
// the conformance harness: the run and its key, and every entry naming
// it in a structure shared with other runs (indexes, ready FIFOs, delayed
// heaps, aside FIFOs, limit holders and waiters, the lease heap, the
// dead-letter list, the expiry lists, the histories kept past their run).
// The event ring and the claim memories are left out, as the hook's
// contract says (storetest.Harness).
func Leftovers(s *Store, id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	of := func(t *task) bool { return t != nil && t.run != nil && t.run.rec.ID == id }
	if s.runs[id] != nil {
		add("run %s", id)
	}
	for k, r := range s.keys {
		if r.rec.ID == id {
			add("key %s", k)
		}
	}
	fifoOf := func(where string, f *fifo) {
		for _, e := range f.items[f.head:] {
			if of(e.t) {
				add("%s: task %s", where, e.t.spec().Name)
			}
		}
	}
	for name, q := range s.queues {
		for p := range q.ready {
			fifoOf(fmt.Sprintf("queue %s ready %d", name, p), &q.ready[p])
		}
		for _, d := range q.delayed {
			if of(d.t) {
				add("queue %s delayed: task %s", name, d.t.spec().Name)
			}
		}
		for handler, f := range q.aside {
			fifoOf(fmt.Sprintf("queue %s aside %s", name, handler), f)
		}
	}
	for key, l := range s.limits {
		for t := range l.holders {
			if of(t) {
				add("limit %s holder: task %s", key, t.spec().Name)
			}
		}
		fifoOf("limit "+key+" waiting", &l.waiting)
	}
	for key, l := range s.rateWaits {
		fifoOf("rate wait "+key, &l.waiting)
	}
	for _, t := range s.leases {
		if of(t) {
			add("lease: task %s", t.spec().Name)
		}
	}
	for _, t := range s.held {
		if of(t) {
			add("held: task %s", t.spec().Name)
		}
	}
	for _, d := range s.dead {
		if d.run == id {
			add("dead letter: task %s", d.task)
		}
	}
	for ret, l := range s.expiry {
		for r := l.head; r != nil; r = r.expireNext {
			if r.rec.ID == id {
				add("expiry list %s", ret)
			}
		}
	}
	if s.kept[id] != nil {
		add("history kept")
	}
	if slices.ContainsFunc(s.keptOrder, func(k *keptHistory) bool { return k != nil && k.id == id }) {
		add("history order")
	}
	for k, ix := range s.indexes {
		if slices.ContainsFunc(ix.runs, func(r *run) bool { return r.rec.ID == id }) {
			add("index %s", k)
		}
	}
	for _, e := range s.ended.entries {
		if e.r.rec.ID == id {
			add("end index")
		}
	}
	return out
}
