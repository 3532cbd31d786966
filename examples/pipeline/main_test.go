package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestPipelinePrintsEachTask(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, line := range []string{
		"generate  succeeded  the quick brown fox jumps over the lazy dog\n",
		"shout     succeeded  THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG\n",
		"count     succeeded  9\n",
		"publish   succeeded  {\"stored\":44,\"key\":",
	} {
		require.Contains(t, got, line)
	}
	require.Contains(t, got, " completed\n")
}
