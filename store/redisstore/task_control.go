package redisstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// taskControlRefused is task_control.lua's reply code when the action does
// not apply to the task's status; the status letter follows.
const taskControlRefused = 11

// TaskControl applies an operator's control to one task in one call of
// task_control.lua, which answers with the run's fields. See
// [store.TaskControlStore]. One round trip.
func (s *Store) TaskControl(ctx context.Context, params *store.TaskControlParams) (*store.TaskControlResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	shard, err := s.runShard(params.RunID)
	if err != nil {
		return nil, err
	}
	v, err := s.runScript(ctx, scriptTaskControl, []string{s.keys.run(shard, params.RunID)},
		s.stepArg(), s.keys.base(shard), s.retentionArg(), params.RunID, params.Task, string(params.Action), params.Reason)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return nil, r.err
	}
	switch code {
	case codeOK:
	case taskControlRefused:
		letter := r.str()
		if r.err != nil || letter == "" {
			return nil, fmt.Errorf("redisstore: task control of run %s: %w", ids.Quote(params.RunID), errCorrupt)
		}
		st, _ := taskStatusOf(letter[0])
		return nil, &store.TaskControlError{RunID: params.RunID, Task: params.Task, Action: params.Action, Status: st}
	default:
		return nil, fmt.Errorf("redisstore: task control of run %s task %s: %w", ids.Quote(params.RunID), ids.Quote(params.Task), codeErr(code))
	}
	h := make(map[string]string, (len(v)-1)/2)
	for r.i+1 < len(v) {
		k := r.str()
		h[k] = r.str()
	}
	if r.err != nil {
		return nil, r.err
	}
	run, err := decodeRun(params.RunID, h)
	if err != nil {
		return nil, err
	}
	return &store.TaskControlResult{Run: run}, nil
}
