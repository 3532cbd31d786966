package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDoctorVersion: a server before 7.0 is an error, 7.0 and later not.
func TestDoctorVersion(t *testing.T) {
	for v, departs := range map[string]bool{"6.2.14": true, "5.0.0": true, "7.0.0": false, "7.2.4": false, "8.0.1": false} {
		n := &doctorNode{info: map[string]string{"redis_version": v}}
		n.checkServer()
		require.Equal(t, departs, len(n.rep.Findings) == 1, v)
	}
}

// TestDoctorPersistence: what each persistence setting departs in.
func TestDoctorPersistence(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"appendonly": "yes", "appendfsync": "always"}, ""},
		{map[string]string{"appendonly": "yes", "appendfsync": "everysec"}, ""},
		{map[string]string{"appendonly": "yes", "appendfsync": "no"}, "appendfsync"},
		{map[string]string{"appendonly": "no", "save": ""}, "appendonly"},
		{map[string]string{"appendonly": "no", "save": "3600 1"}, "appendonly"},
	} {
		n := &doctorNode{config: tc.config}
		n.checkPersistence()
		if tc.want == "" {
			require.Empty(t, n.rep.Findings, tc.config)
			continue
		}
		require.Len(t, n.rep.Findings, 1, tc.config)
		require.Equal(t, tc.want, n.rep.Findings[0].Setting)
		require.Equal(t, SeverityWarning, n.rep.Findings[0].Severity)
	}
}
