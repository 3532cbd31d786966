package redisstore

import (
	"context"

	"github.com/plaitdag/plait"
)

// TaskFinishClaim finishes, then claims. See [plait.Store.TaskFinishClaim].
func (s *Store) TaskFinishClaim(ctx context.Context, params *plait.TaskFinishClaimParams) (*plait.TaskFinishClaimResult, error) {
	fin, err := s.TaskFinish(ctx, &params.Finish)
	if err != nil {
		return nil, err
	}
	res := &plait.TaskFinishClaimResult{Finished: fin}
	if params.Claim.Limit > 0 {
		if res.Claimed, err = s.TaskClaim(ctx, &params.Claim); err != nil {
			return nil, err
		}
	}
	return res, nil
}
