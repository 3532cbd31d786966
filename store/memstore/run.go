package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// run is the stored state of one run.
type run struct {
	rec      store.Run // everything but Tasks
	spec     store.WorkflowSpec
	index    map[string]int
	tasks    []task
	children [][]edge
	// ended counts tasks in a terminal status.
	ended int
	// done is closed when the run reaches a terminal status; it is made
	// by the first RunWait that waits for that, as most runs have none.
	done chan struct{}
	// dead lists dead-lettered task indexes, oldest first.
	dead []int
	// logs holds what the tasks logged, by task name (tasklog.go); nil
	// until a task logs.
	logs map[string]*taskLog
	// expireAt is when a finished run is freed; expireNext is the run freed
	// after it, in the expiry list of its retention.
	expireAt   time.Time
	expireNext *run
	// num is the number in the run's id: the order of creation, which the
	// indexes keep. removed is set once the run is freed or deleted, for the
	// index and expiry entries that still point at it.
	num     uint64
	removed bool
	// firstEvent is the seq of the run's first event in the store's
	// stream (events.go), 0 before it has one; ev holds the names its
	// events share, nil before then.
	firstEvent uint64
	ev         *evRun
	// admitted names the scopes the run is counted against (admission.go),
	// nil when none had a cap at its creation.
	admitted *admitted
}

// edge is one dependency seen from the parent: child task index and the
// condition of the child's dependency.
type edge struct {
	child int
	on    store.Condition
}

// task is the stored state of one task instance.
type task struct {
	run *run
	idx int
	// status and epoch live here, not in inst, for the hot paths of the
	// queues; snapshot copies them into the instance it returns.
	status store.TaskStatus
	epoch  int64
	inst   store.TaskInstance

	leaseUntil time.Time
	leaseIdx   int
	claimedAt  time.Time
	due        time.Time
	// queuedAt is when the task last became ready to run, or the due time
	// it waits for: the QueuedAt of its next attempt record.
	queuedAt  time.Time
	qseq      uint64
	scheduled bool
	// route is the queue the task is kept on: its queue, or the routed
	// queue of the capabilities it requires (store.RoutedQueue).
	route string
	// asideFor names the handler a claim lacked when it set the task
	// aside (routing.go); empty once the task is queued or claimed again.
	asideFor string
	// limitedBy names the limit key the task waits on (keylimits.go);
	// empty once it is queued or claimed again.
	limitedBy string
	// progress is the task's latest progress report (progress.go); nil
	// until one is made, and again after a replay resets the task.
	progress *store.TaskProgress
	// ev holds the names the task's events share (events.go), nil before
	// its first event.
	ev *evTask

	resolved, satisfied int

	// firstAttempt holds the record of the first attempt, which
	// inst.Attempts points into until a second attempt moves them out
	// (record).
	firstAttempt [1]store.Attempt
}

func (t *task) spec() *store.TaskSpec { return &t.run.spec.Tasks[t.idx] }

// oneTaskRun is a run of one task, the most common, with its task, spec
// and edges: one allocation instead of four, and a claim or finish finds
// the task, its run and its spec side by side in memory.
type oneTaskRun struct {
	run      run
	task     [1]task
	spec     [1]store.TaskSpec
	children [1][]edge
}

// allocRun returns an empty run of n tasks, its task, spec and edge
// slices made.
func allocRun(n int) *run {
	if n == 1 {
		b := &oneTaskRun{}
		b.run.tasks, b.run.spec.Tasks, b.run.children = b.task[:], b.spec[:], b.children[:]
		return &b.run
	}
	return &run{tasks: make([]task, n), spec: store.WorkflowSpec{Tasks: make([]store.TaskSpec, n)}, children: make([][]edge, n)}
}

// RunCreateMany creates each run as RunCreate does, in order, once ctx
// was found live. See [store.Store.RunCreateMany].
func (s *Store) RunCreateMany(ctx context.Context, params []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]store.RunCreateOutcome, len(params))
	for i, p := range params {
		out[i].Result, out[i].Err = s.create(p)
	}
	return out, nil
}

// RunCreate stores a workflow as a new run and makes its root tasks ready or
// delayed. See [store.Store.RunCreate].
func (s *Store) RunCreate(ctx context.Context, params *store.RunCreateParams) (*store.RunCreateResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.create(params)
}

// create is RunCreate's step, for a context already checked.
func (s *Store) create(params *store.RunCreateParams) (*store.RunCreateResult, error) {
	if params == nil || params.Workflow == nil || len(params.Workflow.Tasks) == 0 {
		return nil, fmt.Errorf("memstore: run create needs a workflow with tasks: %w", store.ErrInvalidArgument)
	}
	// Service and tenant name the run's indexes (query.go); a name with a
	// ':' would make two of them one.
	for field, v := range map[string]string{"service": params.Service, "tenant": params.Tenant} {
		if v != "" && ids.Check(v) != nil {
			return nil, fmt.Errorf("memstore: %s %s %v: %w", field, ids.Quote(v), ids.Check(v), store.ErrInvalidArgument)
		}
	}
	r, err := newRun(params)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if params.Key != "" {
		if old := s.keys[params.Key]; old != nil {
			return &store.RunCreateResult{Run: old.snapshot(), Existing: true}, nil
		}
	}
	if err := s.admissionCheckLocked(r); err != nil {
		return nil, err
	}
	now := s.now()
	s.expireLocked(now)
	s.nextID++
	r.rec.ID = strconv.FormatUint(s.nextID, 10)
	r.num = s.nextID
	r.rec.CreatedAt = now
	// A new record moves from no status to its first: the status machine
	// checks creation too.
	if err := s.setRunStatusLocked(r, store.RunPending, now); err != nil {
		return nil, err
	}
	for i := range r.tasks {
		if err := s.setTaskStatusLocked(&r.tasks[i], store.TaskPending, now); err != nil {
			return nil, err
		}
	}
	s.runs[r.rec.ID] = r
	s.indexLocked(r)
	if params.Key != "" {
		s.keys[params.Key] = r
	}
	for i := range r.tasks {
		t := &r.tasks[i]
		if len(t.spec().Deps) == 0 {
			if err := s.makeDueLocked(t, now); err != nil {
				return nil, err
			}
		}
	}
	return &store.RunCreateResult{Run: r.snapshot()}, nil
}

// newRun builds the run record and its task graph outside the lock.
func newRun(params *store.RunCreateParams) (*run, error) {
	wf := params.Workflow
	r := allocRun(len(wf.Tasks))
	r.rec = store.Run{
		Key:      params.Key,
		Workflow: wf.Name,
		Strategy: wf.Strategy,
		Tenant:   params.Tenant,
		Service:  params.Service,
		Metadata: copyMeta(params.Metadata),
		Total:    len(wf.Tasks),
	}
	r.spec.Name, r.spec.Strategy = wf.Name, wf.Strategy
	if len(wf.Tasks) >= indexedRun {
		r.index = make(map[string]int, len(wf.Tasks))
	}
	if r.rec.Strategy == "" {
		r.rec.Strategy = store.StrategyContinue
		r.spec.Strategy = store.StrategyContinue
	}
	for i := range wf.Tasks {
		r.spec.Tasks[i] = copySpec(&wf.Tasks[i])
		name := wf.Tasks[i].Name
		if _, dup := specIndex(r, r.spec.Tasks[:i], name); dup {
			return nil, fmt.Errorf("memstore: task %s listed twice: %w", ids.Quote(name), store.ErrInvalidArgument)
		}
		if r.index != nil {
			r.index[name] = i
		}
	}
	for i := range r.spec.Tasks {
		ts := &r.spec.Tasks[i]
		if ts.Queue == "" {
			ts.Queue = store.DefaultQueue
		}
		for _, d := range ts.Deps {
			p, ok := specIndex(r, r.spec.Tasks, d.Task)
			if !ok || p == i {
				return nil, fmt.Errorf("memstore: task %s depends on %s: %w", ids.Quote(ts.Name), ids.Quote(d.Task), store.ErrInvalidArgument)
			}
			r.children[p] = append(r.children[p], edge{child: i, on: d.On})
		}
		r.tasks[i] = task{
			run:      r,
			idx:      i,
			leaseIdx: -1,
			inst:     store.TaskInstance{Name: ts.Name, Handler: ts.Handler, Queue: ts.Queue},
			route:    store.RoutedQueue(ts.Queue, ts.Requires),
		}
	}
	return r, nil
}

// makeDueLocked schedules a task whose dependencies are met: due at
// max(RunAt, CreatedAt+Delay), ready at once when that is not in the future.
func (s *Store) makeDueLocked(t *task, now time.Time) error {
	t.scheduled = true
	spec := t.spec()
	due := now
	if at := ceilMs(spec.RunAt); at.After(due) {
		due = at
	}
	if spec.Delay > 0 {
		if d := t.run.rec.CreatedAt.Add(ceilDur(spec.Delay)); d.After(due) {
			due = d
		}
	}
	return s.scheduleLocked(t, due, now)
}

// RunGet returns a copy of a run with its tasks. See [store.Store.RunGet].
func (s *Store) RunGet(ctx context.Context, params *store.RunGetParams) (*store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.ID)
	if err != nil {
		return nil, err
	}
	return r.snapshot(), nil
}

// RunCancel cancels every unfinished task of a run and the run itself. See
// [store.Store.RunCancel].
func (s *Store) RunCancel(ctx context.Context, params *store.RunCancelParams) (*store.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.ID)
	if err != nil {
		return nil, err
	}
	if !r.rec.Status.Terminal() {
		if err := s.stopRunLocked(r, store.RunCancelled, params.Reason, s.now()); err != nil {
			return nil, err
		}
	}
	return r.snapshot(), nil
}

// RunWait blocks until the run is terminal. See [store.Store.RunWait].
func (s *Store) RunWait(ctx context.Context, params *store.RunWaitParams) (*store.Run, error) {
	s.mu.Lock()
	r, err := s.runLocked(params.ID)
	var done chan struct{}
	if err == nil && !r.rec.Status.Terminal() {
		if r.done == nil {
			r.done = make(chan struct{})
		}
		done = r.done
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.snapshot(), nil
}

// runLocked finds a run for a caller's read or cancel, freeing the runs
// whose retention is over first, so a run past its retention is not found.
func (s *Store) runLocked(id string) (*run, error) {
	s.expireLocked(s.now())
	return s.liveRunLocked(id)
}

// liveRunLocked finds a run for a worker's write. It frees nothing: a run
// past its retention has no running task, so the write is refused all the
// same, and the hot path skips reading the clock.
func (s *Store) liveRunLocked(id string) (*run, error) {
	r := s.runs[id]
	if r == nil {
		return nil, fmt.Errorf("memstore: run %s: %w", ids.Quote(id), store.ErrNotFound)
	}
	return r, nil
}

// snapshot deep-copies the run for a caller.
func (r *run) snapshot() *store.Run {
	out := r.rec
	out.Metadata = copyMeta(r.rec.Metadata)
	out.Tasks = make([]store.TaskInstance, len(r.tasks))
	for i := range r.tasks {
		t := &r.tasks[i]
		in := t.inst
		in.Status = t.status
		in.Epoch = t.epoch
		in.Result = copyBytes(t.inst.Result)
		in.WaitingFor = t.waitingFor()
		in.Progress = t.progress.Clone()
		in.Attempts = copyAttempts(t.inst.Attempts)
		out.Tasks[i] = in
	}
	return &out
}

func copyMeta(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// copySpec deep-copies a task spec.
func copySpec(t *store.TaskSpec) store.TaskSpec {
	out := *t
	out.Payload = copyBytes(t.Payload)
	if t.Deps != nil {
		out.Deps = append([]store.Dep(nil), t.Deps...)
	}
	if t.Requires != nil {
		out.Requires = append([]string(nil), t.Requires...)
	}
	if t.Limits != nil {
		out.Limits = append([]store.TaskLimit(nil), t.Limits...)
	}
	out.Retry = t.Retry
	return out
}
