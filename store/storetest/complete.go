package storetest

import "testing"

func testComplete(t *testing.T, newHarness func(t *testing.T) *Harness) {}
