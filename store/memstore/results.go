package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait"
)

// TaskResults answers the results of the named tasks of one run that
// succeeded, or of the parents of params.ParentsOf. See
// [plait.ResultStore].
func (s *Store) TaskResults(ctx context.Context, params *plait.TaskResultsParams) (*plait.TaskResultsResult, error) {
	res := &plait.TaskResultsResult{Results: make(map[string][]byte)}
	read := func(t *task) {
		if t.status == plait.TaskSucceeded {
			res.Results[t.inst.Name] = copyBytes(t.inst.Result)
		}
	}
	var err error
	if params.ParentsOf == "" {
		err = s.readNamed(params.RunID, params.Tasks, read)
	} else {
		err = s.readParents(params.RunID, params.ParentsOf, params.Tasks, read)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readParents calls read, under the lock, with each parent of task child
// of run id: those named in names, or all of them when none is.
func (s *Store) readParents(id, child string, names []string, read func(t *task)) error {
	if len(names) > plait.TaskResultsMax {
		return fmt.Errorf("memstore: %d task names, want at most %d: %w", len(names), plait.TaskResultsMax, plait.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(id)
	if err != nil {
		return err
	}
	c, ok := r.index[child]
	if !ok {
		return nil
	}
	deps := r.tasks[c].spec().Deps
	if len(names) == 0 {
		for _, d := range deps {
			read(&r.tasks[r.index[d.Task]])
		}
		return nil
	}
	parent := make(map[string]bool, len(deps))
	for _, d := range deps {
		parent[d.Task] = true
	}
	for _, name := range names {
		if parent[name] {
			read(&r.tasks[r.index[name]])
		}
	}
	return nil
}

// readNamed calls read, under the lock, with each named task of run id
// that exists, after checking how many names there are.
func (s *Store) readNamed(id string, names []string, read func(t *task)) error {
	if len(names) > plait.TaskResultsMax {
		return fmt.Errorf("memstore: %d task names, want at most %d: %w", len(names), plait.TaskResultsMax, plait.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(id)
	if err != nil {
		return err
	}
	for _, name := range names {
		if i, ok := r.index[name]; ok {
			read(&r.tasks[i])
		}
	}
	return nil
}

var _ plait.ResultStore = (*Store)(nil)

// TaskPayloads answers the payloads of the named tasks of one run, as
// submitted. See [plait.PayloadStore].
func (s *Store) TaskPayloads(ctx context.Context, params *plait.TaskPayloadsParams) (*plait.TaskPayloadsResult, error) {
	res := &plait.TaskPayloadsResult{Payloads: make(map[string][]byte)}
	err := s.readNamed(params.RunID, params.Tasks, func(t *task) {
		res.Payloads[t.inst.Name] = copyBytes(t.spec().Payload)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

var _ plait.PayloadStore = (*Store)(nil)
