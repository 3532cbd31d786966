package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait"
)

// AttemptHistory answers the attempt records of a run's tasks. See
// [plait.HistoryStore].
func (s *Store) AttemptHistory(ctx context.Context, params *plait.AttemptHistoryParams) (*plait.AttemptHistoryResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	res := &plait.AttemptHistoryResult{}
	for i := range r.tasks {
		t := &r.tasks[i]
		if params.Task != "" && t.inst.Name != params.Task {
			continue
		}
		res.Tasks = append(res.Tasks, plait.TaskHistory{
			Task:     t.inst.Name,
			Attempts: append([]plait.Attempt(nil), t.inst.Attempts...),
		})
	}
	if params.Task != "" && len(res.Tasks) == 0 {
		return nil, fmt.Errorf("memstore: run %s task %q: %w", params.RunID, params.Task, plait.ErrNotFound)
	}
	return res, nil
}
