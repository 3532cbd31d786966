package storetest

import "testing"

func testConditions(t *testing.T, newHarness func(t *testing.T) *Harness) {}
