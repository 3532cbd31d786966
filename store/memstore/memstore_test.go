package memstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/storetest"
)

var (
	_ store.Store         = (*memstore.Store)(nil)
	_ store.Pinger        = (*memstore.Store)(nil)
	_ store.ScheduleStore = (*memstore.Store)(nil)
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newStore is memstore.New for this package's tests, which give valid
// options only.
func newStore(t testing.TB, opts ...memstore.Option) *memstore.Store {
	t.Helper()
	s, err := memstore.New(opts...)
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		s := newStore(t, memstore.WithClock(clk), memstore.WithRetention(time.Hour), memstore.WithHistoryRetention(3*time.Hour),
			memstore.WithMaxResultBytes(1<<10), memstore.WithTaskLogLimit(5, 64), memstore.WithStats(0))
		return &storetest.Harness{
			Store:     s,
			Now:       clk.Now,
			Advance:   clk.Advance,
			Caps:      storetest.Caps{ExpiresKeys: true, Retention: time.Hour, HistoryRetention: 3 * time.Hour, MaxResultBytes: 1 << 10, TaskLogLines: 5, TaskLogBytes: 64},
			Leftovers: func(runID string) []string { return memstore.Leftovers(s, runID) },
		}
	})
}
