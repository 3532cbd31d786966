package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReal(t *testing.T) {
	t.Parallel()
	var c clock.Clock = clock.Real{}
	before := time.Now()
	require.False(t, c.Now().Before(before))

	tm := c.NewTimer(0)
	<-tm.C()

	ran := make(chan struct{})
	c.AfterFunc(0, func() { close(ran) })
	<-ran

	long := c.NewTimer(time.Hour)
	require.True(t, long.Stop())
	fn := c.AfterFunc(time.Hour, func() {})
	require.Nil(t, fn.C())
	require.True(t, fn.Stop())
}
