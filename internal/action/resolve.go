package action

import (
	"context"
	"fmt"
	"slices"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// resolved is a target read for an action: the items the action applies
// to now, and the items of a selection it does not apply to, with why.
type resolved struct {
	items   []Item
	skipped []Item
	capped  bool
}

// skip records a selection item the action does not apply to.
func (r *resolved) skip(it Item, err error) {
	it.Err = err
	r.skipped = append(r.skipped, it)
}

// notApplicable says why an item is left out: its state is not one the
// action applies to. It matches ErrInvalidArgument.
func notApplicable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotApplicable}, args...)...)
}

// checkTarget refuses a target that is not exactly one of IDs, Refs, Runs
// or DeadLetters, or whose form does not fit the action's kind.
func checkTarget(action Action, t Target) error {
	kind := action.Kind()
	if kind == "" {
		return invalid("unknown action %q", string(action))
	}
	forms := 0
	for _, set := range []bool{len(t.IDs) > 0, len(t.Refs) > 0, t.Runs != nil, t.DeadLetters != nil} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return invalid("a target is exactly one of ids, refs, a run query or a dead-letter query")
	}
	if len(t.IDs) > SelectionMax || len(t.Refs) > SelectionMax {
		return invalid("a selection holds at most %d items", SelectionMax)
	}
	for _, id := range t.IDs {
		if id == "" {
			return invalid("an empty id")
		}
	}
	for _, r := range t.Refs {
		if r.RunID == "" || r.Task == "" {
			return invalid("a task ref needs a run id and a task")
		}
	}
	ok := false
	switch kind {
	case KindRun:
		ok = len(t.IDs) > 0 || t.Runs != nil || (action == RunReplay && len(t.Refs) > 0)
	case KindTask:
		ok = len(t.Refs) > 0
	case KindDeadLetter:
		ok = len(t.Refs) > 0 || t.DeadLetters != nil
	case KindQueue, KindNode, KindSchedule:
		ok = len(t.IDs) > 0
	}
	if !ok {
		return invalid("%s does not take this form of target", action)
	}
	if t.Generation != nil && (action != RunReplay || len(t.IDs)+len(refRuns(t.Refs)) != 1) {
		return invalid("a generation is given for a run.replay of one run only")
	}
	if action == ScheduleBackfill && (t.From.IsZero() || t.To.IsZero() || !t.From.Before(t.To)) {
		return invalid("schedule.backfill needs a range, from before to")
	}
	return nil
}

// resolve answers the items action would act on in target now. Count and
// Apply both call it, so the dry run reads what Apply acts on.
func resolve(ctx context.Context, s *plait.Scheduler, action Action, t Target) (*resolved, error) {
	if err := checkTarget(action, t); err != nil {
		return nil, err
	}
	switch action.Kind() {
	case KindRun:
		if t.Runs != nil {
			return runQuery(ctx, s, action, *t.Runs)
		}
		return runSelection(ctx, s, action, t)
	case KindTask:
		return taskSelection(ctx, s, action, t.Refs)
	case KindDeadLetter:
		if t.DeadLetters != nil {
			return letterQuery(ctx, s, *t.DeadLetters)
		}
		return letterSelection(ctx, s, t.Refs)
	case KindNode:
		return nodeSelection(ctx, s, t.IDs)
	case KindSchedule:
		return scheduleSelection(ctx, s, t.IDs)
	}
	res := &resolved{}
	for _, id := range dedupe(t.IDs) {
		res.items = append(res.items, Item{ID: id})
	}
	return res, nil
}

// runApplies answers nil when action applies to run now, else why not.
// It reads the run's summary only (status and counts), which RunList and
// RunGetMany both answer.
func runApplies(action Action, run *plait.Run) error {
	finished := run.Status.Terminal()
	switch action {
	case RunCancel:
		if finished {
			return notApplicable("run %s is %s", run.ID, run.Status)
		}
	case RunDelete:
		if !finished {
			return notApplicable("run %s is %s, not finished", run.ID, run.Status)
		}
	case RunReplay:
		if !finished {
			return notApplicable("run %s is %s, not finished", run.ID, run.Status)
		}
		if run.Failed+run.Skipped+run.Cancelled == 0 {
			return notApplicable("run %s has no failed, dead, cancelled or skipped task", run.ID)
		}
	}
	return nil
}

// runStatuses are the run statuses each run action applies to; a query
// is narrowed to them, so that the store's status indexes skip the rest.
var runStatuses = map[Action][]plait.RunStatus{
	RunCancel: {plait.RunPending, plait.RunRunning},
	RunReplay: {plait.RunCompleted, plait.RunFailed, plait.RunCancelled},
	RunDelete: {plait.RunCompleted, plait.RunFailed, plait.RunCancelled},
}

// narrow answers f with its statuses cut to those action applies to, and
// false when none is left (the query matches nothing the action takes).
func narrow(action Action, f plait.RunFilter) (plait.RunFilter, bool) {
	want, ok := runStatuses[action]
	if !ok {
		return f, true
	}
	if len(f.Statuses) == 0 {
		f.Statuses = want
		return f, true
	}
	var keep []plait.RunStatus
	for _, st := range f.Statuses {
		if slices.Contains(want, st) && !slices.Contains(keep, st) {
			keep = append(keep, st)
		}
	}
	f.Statuses = keep
	return f, len(keep) > 0
}

// runQuery pages RunList over the filter, narrowed to the statuses the
// action applies to, keeping the runs it applies to: up to QueryMax of
// them, reading at most QueryReadMax runs (Capped past either).
func runQuery(ctx context.Context, s *plait.Scheduler, action Action, f plait.RunFilter) (*resolved, error) {
	res := &resolved{}
	f, some := narrow(action, f)
	if !some {
		return res, nil
	}
	cursor, read := "", 0
	for {
		page, err := s.RunList(ctx, plait.RunListParams{Filter: f, Cursor: cursor, Limit: plait.QueryLimitMax})
		if err != nil {
			return nil, err
		}
		read += len(page.Runs) + 1 // an empty page of a bounded read counts too
		for _, run := range page.Runs {
			if runApplies(action, run) != nil {
				continue
			}
			if len(res.items) == QueryMax {
				res.capped = true
				return res, nil
			}
			res.items = append(res.items, Item{ID: run.ID, gen: run.Generation})
		}
		if page.NextCursor == "" {
			return res, nil
		}
		if read >= QueryReadMax {
			res.capped = true
			return res, nil
		}
		cursor = page.NextCursor
	}
}

// runsByID reads runs by id, GetManyMax at a time; a missing run is nil.
func runsByID(ctx context.Context, s *plait.Scheduler, ids []string) (map[string]*plait.Run, error) {
	out := make(map[string]*plait.Run, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), store.GetManyMax)
		runs, err := s.RunGetMany(ctx, ids[:n]...)
		if err != nil {
			return nil, err
		}
		for i, id := range ids[:n] {
			out[id] = runs[i]
		}
		ids = ids[n:]
	}
	return out, nil
}

// runSelection reads the named runs (or the runs of a replay's refs) and
// keeps those the action applies to; the others are skipped with why.
func runSelection(ctx context.Context, s *plait.Scheduler, action Action, t Target) (*resolved, error) {
	ids := dedupe(t.IDs)
	tasks := map[string][]string{}
	if len(t.Refs) > 0 {
		for _, r := range t.Refs {
			if len(tasks[r.RunID]) == 0 {
				ids = append(ids, r.RunID)
			}
			tasks[r.RunID] = appendNew(tasks[r.RunID], r.Task)
		}
	}
	runs, err := runsByID(ctx, s, ids)
	if err != nil {
		return nil, err
	}
	res := &resolved{}
	for _, id := range ids {
		it := Item{ID: id, tasks: tasks[id]}
		run := runs[id]
		if run == nil {
			res.skip(it, fmt.Errorf("action: run %q: %w", id, plait.ErrNotFound))
			continue
		}
		it.gen = run.Generation
		var err error
		switch {
		case len(it.tasks) > 0:
			// Named tasks of a finished run replay whatever their state.
			if err = hasTasks(run, it.tasks); err == nil && !run.Status.Terminal() {
				err = notApplicable("run %s is %s, not finished", run.ID, run.Status)
			}
		default:
			err = runApplies(action, run)
		}
		if err != nil {
			res.skip(it, err)
			continue
		}
		res.items = append(res.items, it)
	}
	return res, nil
}

// hasTasks answers ErrNotFound for the first task run does not hold.
func hasTasks(run *plait.Run, tasks []string) error {
	for _, name := range tasks {
		if run.Task(name) == nil {
			return fmt.Errorf("action: run %s has no task %q: %w", run.ID, name, plait.ErrNotFound)
		}
	}
	return nil
}

// taskApplies answers nil when a task control applies to a task in status
// st, as the store decides it; a pending task that still waits for its
// parents is refused by the store's run now alone, which the status
// cannot tell.
func taskApplies(action Action, runID string, ti *plait.TaskInstance) error {
	st := ti.Status
	ok := false
	switch action {
	case TaskRunNow:
		ok = st == plait.TaskPending || st == plait.TaskRetrying
	case TaskSkip:
		ok = st == plait.TaskPending || st == plait.TaskReady || st == plait.TaskRetrying
	case TaskCancel:
		ok = !st.Terminal()
	}
	if !ok {
		return notApplicable("run %s: task %s is %s", runID, ti.Name, st)
	}
	return nil
}

// taskSelection reads the runs of the refs and keeps the tasks the
// control applies to.
func taskSelection(ctx context.Context, s *plait.Scheduler, action Action, refs []Ref) (*resolved, error) {
	refs = dedupeRefs(refs)
	runs, err := runsByID(ctx, s, refRuns(refs))
	if err != nil {
		return nil, err
	}
	res := &resolved{}
	for _, r := range refs {
		it := Item{RunID: r.RunID, Task: r.Task}
		run := runs[r.RunID]
		var ti *plait.TaskInstance
		if run != nil {
			ti = run.Task(r.Task)
		}
		if ti == nil {
			res.skip(it, fmt.Errorf("action: run %q task %q: %w", r.RunID, r.Task, plait.ErrNotFound))
			continue
		}
		if err := taskApplies(action, r.RunID, ti); err != nil {
			res.skip(it, err)
			continue
		}
		res.items = append(res.items, it)
	}
	return res, nil
}
