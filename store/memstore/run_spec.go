package memstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// RunSpecGet answers a run's definition as it was stored, deep-copied, with
// its payloads and results when asked. memstore keeps every payload for
// as long as its run, so none is ever dropped. See [store.RunSpecStore].
func (s *Store) RunSpecGet(ctx context.Context, params *store.RunSpecGetParams) (*store.RunSpecGetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.ID)
	if err != nil {
		return nil, err
	}
	spec := &store.WorkflowSpec{Name: r.spec.Name, Strategy: r.spec.Strategy, Tasks: make([]store.TaskSpec, len(r.spec.Tasks))}
	for i := range r.spec.Tasks {
		ts := r.spec.Tasks[i]
		if !params.Payloads {
			ts.Payload = nil // not copied only to be dropped
		}
		spec.Tasks[i] = copySpec(&ts)
	}
	res := &store.RunSpecGetResult{Spec: spec}
	if params.Results {
		res.Results = make(map[string][]byte)
		for i := range r.tasks {
			if t := &r.tasks[i]; t.status == store.TaskSucceeded {
				res.Results[t.inst.Name] = copyBytes(t.inst.Result)
			}
		}
	}
	return res, nil
}

var _ store.RunSpecStore = (*Store)(nil)
