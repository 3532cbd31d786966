package storetest

import "testing"

func testSweep(t *testing.T, newHarness func(t *testing.T) *Harness) {}
