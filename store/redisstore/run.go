package redisstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// RunGet returns a run with its tasks: one HGETALL. See [store.Store.RunGet].
func (s *Store) RunGet(ctx context.Context, params *store.RunGetParams) (*store.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	h, err := s.client.HGetAll(ctx, s.keys.run(shard, params.ID)).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	return decodeRun(params.ID, h)
}

// RunCancel cancels a run. See [store.Store.RunCancel]. One round trip: the
// script answers with the run's fields.
func (s *Store) RunCancel(ctx context.Context, params *store.RunCancelParams) (*store.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	v, err := s.runScript(ctx, scriptRunCancel, []string{s.keys.run(shard, params.ID)},
		s.stepArg(), s.keys.base(shard), s.retentionArg(), params.ID, params.Reason)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return nil, r.err
	}
	if err := codeErr(code); err != nil {
		return nil, fmt.Errorf("redisstore: cancel run %s: %w", ids.Quote(params.ID), err)
	}
	h := make(map[string]string, (len(v)-1)/2)
	for r.i+1 < len(v) {
		k := r.str()
		h[k] = r.str()
	}
	if r.err != nil {
		return nil, r.err
	}
	return decodeRun(params.ID, h)
}
