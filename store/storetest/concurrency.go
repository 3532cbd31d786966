package storetest

import "testing"

func testConcurrency(t *testing.T, newHarness func(t *testing.T) *Harness) {}
