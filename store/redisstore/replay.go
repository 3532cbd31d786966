package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Reply codes of run_replay.lua beyond the shared ones (codes.go).
const (
	replayExisting    = 7  // the generation asked for is open already
	replayConflict    = 8  // the run is active or at another generation
	replayNotReplay   = 9  // a named task is in a status a replay does not restart
	replayPayloadGone = 10 // a reset task's payload, kept apart, is gone
)

// RunReplay opens the next generation of a finished run in one call of
// run_replay.lua: the named tasks (or every failed, dead, cancelled and
// skipped one) and every task below them go back to pending, their dead
// letters leave the lists, and the run's keys lose their retention until
// the generation ends. See [store.ReplayStore]. One round trip.
//
// A task whose payload was kept apart (a small run with a long payload)
// keeps it after it fails, dies, is cancelled or skipped, so it can run
// again; one that succeeded has lost it, and a replay that would reset it
// is refused with [store.ErrReplayConflict].
func (s *Store) RunReplay(ctx context.Context, params *store.RunReplayParams) (*store.RunReplayResult, error) {
	if params == nil || params.RunID == "" {
		return nil, fmt.Errorf("redisstore: replay needs a run id: %w", store.ErrInvalidArgument)
	}
	if params.Generation < 0 {
		return nil, fmt.Errorf("redisstore: replay of run %s: generation %d: %w", ids.Quote(params.RunID), params.Generation, store.ErrInvalidArgument)
	}
	for _, t := range params.Tasks {
		if t == "" || strings.ContainsRune(t, ' ') {
			return nil, fmt.Errorf("redisstore: replay of run %s: task %s: %w", ids.Quote(params.RunID), ids.Quote(t), store.ErrNotFound)
		}
	}
	shard, err := s.runShard(params.RunID)
	if err != nil {
		return nil, err
	}
	v, err := s.runScript(ctx, scriptRunReplay, []string{s.keys.run(shard, params.RunID)},
		s.stepArg(), s.keys.base(shard), s.retentionArg(), params.RunID, params.Generation,
		strings.Join(params.Tasks, " "))
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return nil, r.err
	}
	res := &store.RunReplayResult{}
	switch code {
	case codeOK:
		n := int(r.int())
		for i := 0; i < n; i++ {
			res.Reset = append(res.Reset, r.str())
		}
	case replayExisting:
		res.Existing = true
	case replayConflict:
		gen := r.int()
		st, _ := runStatusOf(r.str())
		if r.err != nil {
			return nil, r.err
		}
		return nil, &store.ReplayError{RunID: params.RunID, Generation: gen, Expected: params.Generation, Status: st}
	case replayNotReplay:
		task, letter := r.str(), r.str()
		run, _ := runStatusOf(r.str())
		if r.err != nil || letter == "" {
			return nil, fmt.Errorf("redisstore: replay of run %s: %w", ids.Quote(params.RunID), errCorrupt)
		}
		st, _ := taskStatusOf(letter[0])
		return nil, &store.ReplayError{RunID: params.RunID, Generation: params.Generation, Expected: params.Generation,
			Status: run, Task: task, TaskStatus: st}
	case replayPayloadGone:
		return nil, fmt.Errorf("redisstore: replay of run %s: the payload of task %s is no longer stored (it succeeded, or Redis lost it): %w",
			ids.Quote(params.RunID), ids.Quote(r.str()), store.ErrReplayConflict)
	case codeNotFound:
		if r.i < len(v) {
			return nil, fmt.Errorf("redisstore: replay of run %s: task %s: %w", ids.Quote(params.RunID), ids.Quote(r.str()), store.ErrNotFound)
		}
		return nil, fmt.Errorf("redisstore: replay of run %s: %w", ids.Quote(params.RunID), store.ErrNotFound)
	case codeInvalid:
		return nil, fmt.Errorf("redisstore: run %s has no failed, dead, cancelled or skipped task to replay: %w", ids.Quote(params.RunID), store.ErrInvalidArgument)
	default:
		return nil, fmt.Errorf("redisstore: replay of run %s: %w", ids.Quote(params.RunID), codeErr(code))
	}
	h := make(map[string]string, (len(v)-r.i)/2)
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
	res.Run = run
	return res, nil
}
