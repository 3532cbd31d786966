package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait"
)

// TaskResults answers the results of the named tasks of one run that
// succeeded. See [plait.ResultStore].
func (s *Store) TaskResults(ctx context.Context, params *plait.TaskResultsParams) (*plait.TaskResultsResult, error) {
	if len(params.Tasks) > plait.TaskResultsMax {
		return nil, fmt.Errorf("memstore: %d task names, want at most %d: %w", len(params.Tasks), plait.TaskResultsMax, plait.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	res := &plait.TaskResultsResult{Results: make(map[string][]byte)}
	for _, name := range params.Tasks {
		i, ok := r.index[name]
		if !ok {
			continue
		}
		t := &r.tasks[i]
		if t.status != plait.TaskSucceeded {
			continue
		}
		res.Results[name] = copyBytes(t.inst.Result)
	}
	return res, nil
}

var _ plait.ResultStore = (*Store)(nil)

// TaskPayloads answers the payloads of the named tasks of one run, as
// submitted. See [plait.PayloadStore].
func (s *Store) TaskPayloads(ctx context.Context, params *plait.TaskPayloadsParams) (*plait.TaskPayloadsResult, error) {
	if len(params.Tasks) > plait.TaskResultsMax {
		return nil, fmt.Errorf("memstore: %d task names, want at most %d: %w", len(params.Tasks), plait.TaskResultsMax, plait.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	res := &plait.TaskPayloadsResult{Payloads: make(map[string][]byte)}
	for _, name := range params.Tasks {
		if i, ok := r.index[name]; ok {
			res.Payloads[name] = copyBytes(r.tasks[i].spec().Payload)
		}
	}
	return res, nil
}

var _ plait.PayloadStore = (*Store)(nil)
