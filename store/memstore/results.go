package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// TaskResults answers the results of the named tasks of one run that
// succeeded, or of the parents of params.ParentsOf. See
// [store.ResultStore].
func (s *Store) TaskResults(ctx context.Context, params *store.TaskResultsParams) (*store.TaskResultsResult, error) {
	res := &store.TaskResultsResult{Results: make(map[string][]byte)}
	read := func(t *task) {
		if t.status == store.TaskSucceeded {
			res.Results[t.inst.Name] = copyBytes(t.inst.Result)
		}
	}
	if err := s.readNamed(params.RunID, params.ParentsOf, params.Tasks, read); err != nil {
		return nil, err
	}
	return res, nil
}

// readNamed calls read, under the lock, with each named task of run id
// that exists, after checking how many names there are. With child set
// only the parents of task child count: the named ones, or all of them
// when none is named; a child the run lacks has none.
func (s *Store) readNamed(id, child string, names []string, read func(t *task)) error {
	if len(names) > store.TaskResultsMax {
		return fmt.Errorf("memstore: %d task names, want at most %d: %w", len(names), store.TaskResultsMax, store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(id)
	if err != nil {
		return err
	}
	var parent map[string]bool
	if child != "" {
		c, ok := r.find(child)
		if !ok {
			return nil
		}
		deps := r.tasks[c].spec().Deps
		if len(names) == 0 {
			for _, d := range deps {
				read(&r.tasks[r.indexOf(d.Task)])
			}
			return nil
		}
		parent = make(map[string]bool, len(deps))
		for _, d := range deps {
			parent[d.Task] = true
		}
	}
	for _, name := range names {
		if i, ok := r.find(name); ok && (parent == nil || parent[name]) {
			read(&r.tasks[i])
		}
	}
	return nil
}

var _ store.ResultStore = (*Store)(nil)

// TaskPayloads answers the payloads of the named tasks of one run, as
// submitted. See [store.PayloadStore].
func (s *Store) TaskPayloads(ctx context.Context, params *store.TaskPayloadsParams) (*store.TaskPayloadsResult, error) {
	res := &store.TaskPayloadsResult{Payloads: make(map[string][]byte)}
	err := s.readNamed(params.RunID, "", params.Tasks, func(t *task) {
		res.Payloads[t.inst.Name] = copyBytes(t.spec().Payload)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

var _ store.PayloadStore = (*Store)(nil)
