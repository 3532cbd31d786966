package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// letterQuery pages DeadLetterList over the filter, up to QueryMax
// letters, reading at most QueryReadMax (Capped past either).
func letterQuery(ctx context.Context, s *plait.Scheduler, f DeadLetterFilter) (*resolved, error) {
	res, read := &resolved{}, 0
	p := plait.DeadLetterListParams{
		RunID: f.RunID, Workflow: f.Workflow, Task: f.Task, Tenant: f.Tenant, Service: f.Service,
		Queue: f.Queue, Handler: f.Handler, ErrorPrefix: f.ErrorPrefix, Since: f.Since, Until: f.Until,
		Limit: store.DeadLetterPageMax,
	}
	for {
		page, err := s.DeadLetterList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, l := range page.Letters {
			if f.ErrorKey != "" && plait.DeadLetterErrorKey(l.Error) != f.ErrorKey {
				continue
			}
			if len(res.items) == QueryMax {
				res.capped = true
				return res, nil
			}
			res.items = append(res.items, Item{RunID: l.RunID, Task: l.Task})
		}
		read += len(page.Letters) + 1
		if page.NextCursor == "" {
			return res, nil
		}
		if read >= QueryReadMax {
			res.capped = true
			return res, nil
		}
		p.Cursor = page.NextCursor
	}
}

// letterSelection keeps the refs whose task is failed or dead now.
func letterSelection(ctx context.Context, s *plait.Scheduler, refs []Ref) (*resolved, error) {
	refs = dedupeRefs(refs)
	runs, err := runsByID(ctx, s, refRuns(refs))
	if err != nil {
		return nil, err
	}
	res := &resolved{}
	for _, r := range refs {
		it := Item{RunID: r.RunID, Task: r.Task}
		var ti *plait.TaskInstance
		if run := runs[r.RunID]; run != nil {
			ti = run.Task(r.Task)
		}
		switch {
		case ti == nil:
			res.skip(it, fmt.Errorf("action: run %q task %q: %w", r.RunID, r.Task, plait.ErrNotFound))
		case ti.Status != plait.TaskFailed && ti.Status != plait.TaskDead:
			res.skip(it, notApplicable("run %s: task %s is %s, not a dead letter", r.RunID, r.Task, ti.Status))
		default:
			res.items = append(res.items, it)
		}
	}
	return res, nil
}

// nodeSelection keeps the live nodes named.
func nodeSelection(ctx context.Context, s *plait.Scheduler, ids []string) (*resolved, error) {
	res := &resolved{}
	for _, id := range dedupe(ids) {
		if _, err := s.NodeGet(ctx, id); err != nil {
			if !errors.Is(err, plait.ErrNotFound) {
				return nil, err
			}
			res.skip(Item{ID: id}, err)
			continue
		}
		res.items = append(res.items, Item{ID: id})
	}
	return res, nil
}

// scheduleSelection keeps the schedules named that exist.
func scheduleSelection(ctx context.Context, s *plait.Scheduler, names []string) (*resolved, error) {
	res := &resolved{}
	for _, name := range dedupe(names) {
		if _, err := s.ScheduleGet(ctx, name); err != nil {
			if !errors.Is(err, plait.ErrNotFound) {
				return nil, err
			}
			res.skip(Item{ID: name}, err)
			continue
		}
		res.items = append(res.items, Item{ID: name})
	}
	return res, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func dedupeRefs(refs []Ref) []Ref {
	seen := make(map[Ref]bool, len(refs))
	out := make([]Ref, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func refRuns(refs []Ref) []string {
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.RunID)
	}
	return dedupe(ids)
}
