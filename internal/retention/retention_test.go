package retention

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMostSpecificRuleWins(t *testing.T) {
	t.Parallel()
	tb := New(time.Hour)
	require.True(t, tb.Uniform())
	require.Equal(t, time.Hour, tb.For("billing", "failed"))
	tb.Set("", "failed", 2*time.Hour)
	tb.Set("billing", "", 3*time.Hour)
	tb.Set("billing", "cancelled", 4*time.Hour)
	require.False(t, tb.Uniform())
	require.Equal(t, 2*time.Hour, tb.For("mail", "failed"), "a status rule applies to every service")
	require.Equal(t, time.Hour, tb.For("mail", "completed"), "no rule: the default")
	require.Equal(t, 3*time.Hour, tb.For("billing", "failed"), "a service rule beats a status rule")
	require.Equal(t, 4*time.Hour, tb.For("billing", "cancelled"), "a service and status rule beats both")
	require.Equal(t, 3*time.Hour, tb.For("billing", "completed"))
	require.Equal(t, 2*time.Hour, tb.For("", "failed"), "a run without a service")
}
