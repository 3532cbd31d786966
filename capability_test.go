package plait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/storetest"
)

// coreOnly hides every optional capability of the store it wraps: it is a
// Store and nothing more, like a third-party store that implements only the
// execution core.
type coreOnly struct{ store.Store }

func TestSchedulerAnswersUnsupportedForAMissingCapability(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.Ping(context.Background())
	require.ErrorIs(t, err, plait.ErrUnsupported)
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "Pinger", ue.Capability)
	require.Contains(t, err.Error(), "Pinger")
	require.Empty(t, storetest.Capabilities(coreOnly{newMemStore(t)}), "a core-only store runs no capability suite")
}

func TestSchedulerPingsAStoreWithTheCapability(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	store := newMemStore(t, memstore.WithClock(clk))
	s, err := plait.New(store, plait.WithClock(clk))
	require.NoError(t, err)
	rep, err := s.Ping(context.Background())
	require.NoError(t, err)
	require.True(t, rep.StoreNow.Equal(clk.Now()))
	require.Zero(t, rep.RoundTrip, "no time passes on a fake clock")
	require.Equal(t, []string{"ClaimRouter", "FairClaimer", "Limiter", "Pinger", "QueueDepther", "QueueLister", "TaskSearchStore", "EventStore", "StatsStore", "StatsSeriesStore", "ScheduleStore", "NodeStore", "QueryStore", "HistoryStore", "TaskLogStore", "ProgressStore", "DeadLetterStore", "DeadLetterGroupStore", "ReplayStore", "ResultStore", "PayloadStore", "RunSpecStore", "TaskControlStore", "RunNoteStore", "RunDeleteManyStore", "AdmissionStore"}, storetest.Capabilities(store))
}
