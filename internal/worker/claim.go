package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// requestIDs hands out the RequestIDs of one process's claims: a random
// prefix drawn once, so two processes never share one, and a counter.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() requestIDs {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports; a
		// prefix of the clock keeps ids apart in the unlikely case.
		return requestIDs{prefix: strconv.FormatInt(time.Now().UnixNano(), 36)}
	}
	return requestIDs{prefix: hex.EncodeToString(b[:])}
}

// next returns a RequestID no claim of any process has used.
func (r *requestIDs) next() string {
	return r.prefix + "." + strconv.FormatUint(r.n.Add(1), 36)
}

// claimRetryMin is the first pause before a failed claim is sent again.
const claimRetryMin = 10 * time.Millisecond

// claim sends a claim and, while the call fails and Run goes on, sends it
// again with the same RequestID: a call that reached the store took tasks
// whose answer was lost, and only the same RequestID learns which (without
// it they would wait out their lease and be charged a crash). Once the
// lease has passed the store has forgotten the call and a resend claims
// afresh, which is as good. The pauses double up to the idle wait.
func (p *pool) claim(ctx context.Context, params *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	delay := claimRetryMin
	for failures := 0; ; failures++ {
		res, err := p.store.TaskClaim(ctx, params)
		if err == nil || ctx.Err() != nil || errors.Is(err, store.ErrInvalidArgument) {
			if err == nil && failures > 0 {
				p.cfg.Logger.Info("plait: claim answered after failed tries", "failed", failures, "tasks", len(res.Tasks))
			}
			return res, err
		}
		if failures == 0 {
			p.cfg.Logger.Warn("plait: claim failed; sending it again", "err", err)
		}
		if errors.Is(err, store.ErrStoreFull) {
			// Nothing was claimed: a full store refuses a claim whole.
			return nil, err
		}
		p.pause(ctx, delay)
		delay = min(2*delay, p.cfg.IdleWait)
	}
}
