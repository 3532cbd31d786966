package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// leftStore answers every TaskFinishClaim as applied, with left as its
// ParentsLeft. The other methods are not called.
type leftStore struct {
	store.Store
	left int
}

func (s *leftStore) TaskFinishClaim(_ context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	return &store.TaskFinishClaimResult{Finished: make([]store.TaskFinishResult, len(params.Finish.Outcomes)), ParentsLeft: s.left}, nil
}

// TestNearJoinBoundsClaims writes an outcome whose answer says a join
// waits on so many parents, then asks how many of all the free slots a
// claim may take: after an answer of more parents than the process holds
// at once, an eighth of what the join waits on, never fewer than the
// handlers run at once, the rest of the slots given back; every slot after
// a narrower join, and once the hold has passed without another such
// answer.
func TestNearJoinBoundsClaims(t *testing.T) {
	for _, c := range []struct {
		left, want int
	}{
		{left: 0, want: 74},    // no join waits
		{left: 10, want: 74},   // a join the handlers' claim takes whole
		{left: 74, want: 74},   // a join one claim may take whole
		{left: 2000, want: 74}, // far: the bound is over every slot
		{left: 400, want: 50},  // 400/8
		{left: 76, want: 10},   // near: the handlers' share, not 76/8
	} {
		st := &leftStore{left: c.left}
		clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		p := newPool(&Config{Store: st, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			NodeID: "node", LeaseDuration: time.Minute, ShutdownTimeout: time.Second,
			Concurrency: 10, Prefetch: 64, Emit: func(Event) {}})
		ct := &store.ClaimedTask{Lease: store.Lease{RunID: "run", Task: "t", Epoch: 1}, Spec: store.TaskSpec{Name: "t"}, Attempt: 1}
		e := &Attempt{ct: ct, pool: p, deadline: clk.Now().Add(time.Minute)}
		p.track(e)
		p.fin.write(context.Background(), []finishReq{{e: e, o: store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}}}, nil)

		free := p.slots.take(0)
		require.Equal(t, 74, free, "left %d: every slot is free", c.left)
		got := p.nearJoinBound(free)
		require.Equal(t, c.want, got, "left %d: the claim's bound", c.left)
		require.Equal(t, free-got, p.slots.take(0), "left %d: the slots over the bound are given back", c.left)
		p.slots.add(free)

		clk.Advance(nearJoinHold)
		require.Equal(t, 74, p.nearJoinBound(p.slots.take(0)), "left %d: no bound once the hold has passed", c.left)
	}
}
