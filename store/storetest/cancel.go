package storetest

import "testing"

func testCancel(t *testing.T, newHarness func(t *testing.T) *Harness) {}
