package memstore_test

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/storetest"
)

// TestEventsSmallCaps runs the event suite on a store whose run streams
// keep 50 events, so the case about a reader behind the cap runs.
func TestEventsSmallCaps(t *testing.T) {
	storetest.RunCapability(t, "EventStore", func(t *testing.T) *storetest.Harness {
		clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		return &storetest.Harness{
			Store:   newStore(t, memstore.WithClock(clk), memstore.WithEventCap(50)),
			Now:     clk.Now,
			Advance: clk.Advance,
			Caps:    storetest.Caps{EventCap: 50},
		}
	})
}
