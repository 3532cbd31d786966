package storetest

import "testing"

func testWait(t *testing.T, newHarness func(t *testing.T) *Harness) {}
