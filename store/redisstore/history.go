package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// AttemptHistory answers the attempt records of a run's tasks. See
// [store.HistoryStore]. One round trip (HGETALL of the run hash, where
// each ended claim left its field a:<task>:<epoch>), and a second for a
// run that is gone, whose records may outlive it in h:<run>
// ([WithHistoryRetention]), a copy of the same fields; only the fields of
// the tasks asked for are decoded.
func (s *Store) AttemptHistory(ctx context.Context, params *store.AttemptHistoryParams) (*store.AttemptHistoryResult, error) {
	shard, err := s.runShard(params.RunID)
	if err != nil {
		return nil, err
	}
	h, err := s.client.HGetAll(ctx, s.keys.run(shard, params.RunID)).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	ms, ok := h["m"]
	if !ok {
		if h, err = s.client.HGetAll(ctx, s.keys.history(shard, params.RunID)).Result(); err != nil {
			return nil, mapErr(err)
		}
		ms, ok = h["m"]
	}
	if !ok {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(params.RunID), store.ErrNotFound)
	}
	m, err := decodeMeta(ms)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", params.RunID, err)
	}
	// the copy h:<run> holds field i too: its version says whether final
	// attempts are folded into the states (codec_fold.go)
	version := hashVersion(h)
	res := &store.AttemptHistoryResult{}
	for _, name := range strings.Fields(h["o"]) {
		if params.Task != "" && name != params.Task {
			continue
		}
		st, err := decodeState(h["s:"+name])
		if err != nil {
			return nil, fmt.Errorf("run %s task %q: %w", params.RunID, name, err)
		}
		attempts, err := decodeTaskAttempts(name, h, st, version, m.created)
		if err != nil {
			return nil, fmt.Errorf("run %s task %q: %w", params.RunID, name, err)
		}
		latest, err := taskProgress(name, h)
		if err == nil {
			err = attemptProgress(name, h, latest, attempts)
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", params.RunID, err)
		}
		res.Tasks = append(res.Tasks, store.TaskHistory{Task: name, Attempts: attempts})
	}
	if params.Task != "" && len(res.Tasks) == 0 {
		return nil, fmt.Errorf("redisstore: run %s task %s: %w", params.RunID, ids.Quote(params.Task), store.ErrNotFound)
	}
	return res, nil
}
