package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// testPinger is the suite of [plait.Pinger].
func testPinger(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "PingAnswersTheStoreClock",
			rule: "StorePing answers the store's clock and changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				p := h.Store.(plait.Pinger)
				r := createRun(t, h, nil)
				h.Advance(1500 * time.Millisecond)
				res, err := p.StorePing(bg, &plait.StorePingParams{})
				require.NoError(t, err, rule)
				sameTime(t, h.Now(), res.Now, rule)
				require.Equal(t, plait.RunPending, getRun(t, h, r.ID).Status, rule)
			},
		},
	})
}
