package worker

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// auditedStore prunes nothing, lists no running run and counts the task
// searches of the lease audit. The other methods are not called.
type auditedStore struct {
	store.Store
	store.QueryStore
	searches atomic.Int64
}

func (s *auditedStore) RunPrune(context.Context, *store.RunPruneParams) (*store.RunPruneResult, error) {
	return &store.RunPruneResult{}, nil
}

func (s *auditedStore) RunList(context.Context, *store.RunListParams) (*store.RunListResult, error) {
	return &store.RunListResult{}, nil
}

func (s *auditedStore) TaskSearch(context.Context, *store.TaskSearchParams) (*store.TaskSearchResult, error) {
	s.searches.Add(1)
	return &store.TaskSearchResult{}, nil
}

// TestLeaseAuditOnlyWhereItAudits runs the janitor for three passes on a
// fake clock with Config.Audits answering false, then true, then unset:
// the lease audit reads the running tasks only in a process that audits
// for the fleet, or in every process when nothing says which. It fails if
// the janitor audits regardless of Audits (every process of a fleet would
// read all its running work each pass) or never audits when it should.
func TestLeaseAuditOnlyWhereItAudits(t *testing.T) {
	for _, c := range []struct {
		name   string
		audits func() bool
		want   bool
	}{
		{"NotTheLeader", func() bool { return false }, false},
		{"TheLeader", func() bool { return true }, true},
		{"NoLeader", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := &auditedStore{}
			passes := make(chan struct{}, 8)
			p := &pool{store: st, cfg: &Config{
				Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				JanitorInterval: time.Second, Audits: c.audits,
				Emit: func(e Event) {
					if e.Type == EventRunsPruned {
						passes <- struct{}{}
					}
				},
			}}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				p.janitor(ctx, st)
			}()
			for i := 0; i < 3; i++ {
				require.True(t, clk.WaitForTimers(1, nil), "the janitor waits for its next pass")
				clk.Advance(time.Second)
				<-passes
			}
			// the third pass's audit, if any, is done once the janitor
			// waits for its fourth
			require.True(t, clk.WaitForTimers(1, nil))
			cancel()
			<-done
			if c.want {
				require.Positive(t, st.searches.Load(), "the process audits")
			} else {
				require.Zero(t, st.searches.Load(), "a process that does not audit reads no running task")
			}
		})
	}
}
