package memstore

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
)

// TaskSearch answers one page of tasks across runs; see
// [store.TaskSearchStore]. It reads the structures a Redis store reads, in
// the same sections and order, and makes the same cursors, so the stores
// answer alike; being in memory, it reads each section whole, with no
// budget: a page is short only when it is the last.
func (s *Store) TaskSearch(ctx context.Context, params *store.TaskSearchParams) (*store.TaskSearchResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	var cur store.TaskSearchPosition
	if params.Cursor != "" {
		cur, _ = store.ParseTaskSearchCursor(params.Cursor)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	res := &store.TaskSearchResult{}
	var last store.TaskSearchPosition
	for sec := store.TaskSearchRunning; sec <= store.TaskSearchRuns; sec++ {
		if sec < cur.Section || !params.WantsSection(sec) {
			continue
		}
		from := (*store.TaskSearchPosition)(nil)
		if sec == cur.Section {
			from = &cur
		}
		for _, c := range s.searchSectionLocked(sec, params, from) {
			hit := c.t.hit()
			if !params.Matches(&hit) {
				continue
			}
			if len(res.Tasks) == params.Limit {
				res.NextCursor = last.Cursor()
				return res, nil
			}
			res.Tasks = append(res.Tasks, hit)
			last = c.pos
		}
	}
	return res, nil
}

// found is one task of a section at its position.
type found struct {
	pos store.TaskSearchPosition
	t   *task
}

// searchSectionLocked answers the tasks of section sec in its order, those
// after from only when from is not nil.
func (s *Store) searchSectionLocked(sec int, params *store.TaskSearchParams, from *store.TaskSearchPosition) []found {
	var out []found
	byScore := func() {
		slices.SortFunc(out, func(a, b found) int {
			return cmp.Or(cmp.Compare(a.pos.Queue, b.pos.Queue), cmp.Compare(a.pos.Score, b.pos.Score), cmp.Compare(a.pos.Member, b.pos.Member))
		})
		if from != nil {
			out = slices.DeleteFunc(out, func(f found) bool {
				return cmp.Or(cmp.Compare(f.pos.Queue, from.Queue), cmp.Compare(f.pos.Score, from.Score), cmp.Compare(f.pos.Member, from.Member)) <= 0
			})
		}
	}
	switch sec {
	case store.TaskSearchRunning:
		for _, t := range s.leases {
			out = append(out, found{store.TaskSearchPosition{Section: sec, Score: t.leaseUntil.UnixMilli(), Member: t.member()}, t})
		}
		byScore()
	case store.TaskSearchReady:
		for _, name := range s.searchQueuesLocked(params.Queue) {
			q := s.queues[name]
			if from != nil && name < from.Queue {
				continue
			}
			lists := map[string]*fifo{}
			for p := range q.ready {
				lists[strconv.Itoa(3-p)] = &q.ready[p]
			}
			for h, f := range q.aside {
				lists["g"+h] = f
			}
			if !strings.Contains(name, "+") {
				if l := s.limits[store.QueueLimitKey(name)]; l != nil {
					lists["l"] = &l.waiting
				}
			}
			order := make([]string, 0, len(lists))
			for l := range lists {
				order = append(order, l)
			}
			slices.SortFunc(order, store.TaskSearchListRank)
			for _, l := range order {
				f := lists[l]
				es := f.items[f.head:]
				start := 0
				if from != nil && name == from.Queue {
					if c := store.TaskSearchListRank(l, from.List); c < 0 {
						continue
					} else if c == 0 {
						// resume after the cursor's entry; from the head
						// when it has left the list, and every entry
						// before it with it
						for i, e := range es {
							if e.t.member() == from.Member {
								es, start = es[i+1:], i+1
								break
							}
						}
					}
				}
				for i, e := range es {
					if e.live() {
						out = append(out, found{store.TaskSearchPosition{Section: sec, Queue: name, List: l, Score: int64(start + i), Member: e.t.member()}, e.t})
					}
				}
			}
		}
	case store.TaskSearchRetrying:
		for _, name := range s.searchQueuesLocked(params.Queue) {
			for _, d := range s.queues[name].delayed {
				if d.live() && d.t.status == store.TaskRetrying {
					out = append(out, found{store.TaskSearchPosition{Section: sec, Queue: name, Score: d.due.UnixMilli(), Member: d.t.member()}, d.t})
				}
			}
		}
		byScore()
	case store.TaskSearchDead:
		for _, d := range s.dead {
			r := s.runs[d.run]
			if r == nil {
				continue
			}
			if i, ok := r.find(d.task); ok {
				t := &r.tasks[i]
				out = append(out, found{store.TaskSearchPosition{Section: sec, Score: t.inst.EndedAt.UnixMilli(), Member: t.member()}, t})
			}
		}
		byScore()
	case store.TaskSearchRuns:
		runs := make([]*run, 0, len(s.runs))
		for _, r := range s.runs {
			runs = append(runs, r)
		}
		// newest first, as the Redis run indexes are read
		sort.Slice(runs, func(i, j int) bool {
			a, b := runs[i], runs[j]
			if ca, cb := a.rec.CreatedAt.UnixMilli(), b.rec.CreatedAt.UnixMilli(); ca != cb {
				return ca > cb
			}
			return a.rec.ID > b.rec.ID
		})
		for _, r := range runs {
			created := r.rec.CreatedAt.UnixMilli()
			skip := -1
			if from != nil {
				run, task, _ := strings.Cut(from.Member, " ")
				if created > from.Score || (created == from.Score && r.rec.ID > run) {
					continue
				}
				if r.rec.ID == run {
					skip = r.indexOf(task)
				}
			}
			for i := range r.tasks {
				t := &r.tasks[i]
				if i > skip && store.TaskSearchSection(t.status) == sec {
					out = append(out, found{store.TaskSearchPosition{Section: sec, Score: created, Member: t.member()}, t})
				}
			}
		}
	}
	return out
}

// searchQueuesLocked answers the registry's queues, sorted, those of
// queue only when it is not empty (the plain queue and its routed ones).
func (s *Store) searchQueuesLocked(queue string) []string {
	var names []string
	for name := range s.queues {
		if queue != "" {
			if q, _, _ := store.SplitRoutedQueue(name); q != queue {
				continue
			}
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// member is the task's entry "<run> <task>".
func (t *task) member() string { return t.run.rec.ID + " " + t.inst.Name }

// hit is the task as TaskSearch answers it: as RunGet has it, with its
// run's names, its queue and, running, its lease deadline.
func (t *task) hit() store.TaskHit {
	r := t.run
	in := t.inst
	in.Status = t.status
	in.Epoch = t.epoch
	in.Result = copyBytes(t.inst.Result)
	in.WaitingFor = t.waitingFor()
	if len(t.inst.Attempts) > 0 {
		in.Attempts = append([]store.Attempt(nil), t.inst.Attempts...)
	}
	sp := t.spec()
	q := sp.Queue
	if q == "" {
		q = store.DefaultQueue
	}
	h := store.TaskHit{RunID: r.rec.ID, Workflow: r.rec.Workflow, Tenant: r.rec.Tenant, Service: r.rec.Service,
		Queue: q, Priority: sp.Priority, TaskInstance: in}
	if t.status == store.TaskRunning {
		h.LeaseUntil = t.leaseUntil
	}
	return h
}

var _ store.TaskSearchStore = (*Store)(nil)
