package labelcap_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/plaitdag/plait/internal/labelcap"
)

// TestCap: the first values are admitted and stay themselves; every later
// new value reads as Other.
func TestCap(t *testing.T) {
	c := labelcap.New(2)
	for _, tc := range []struct{ in, want string }{
		{"a", "a"}, {"b", "b"}, {"c", labelcap.Other}, {"a", "a"}, {"d", labelcap.Other}, {"b", "b"},
	} {
		if got := c.Value(tc.in); got != tc.want {
			t.Fatalf("Value(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCapConcurrent: values offered at once by many goroutines admit no
// more than the cap, and each value reads the same every time.
func TestCapConcurrent(t *testing.T) {
	const max = 5
	c := labelcap.New(max)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				c.Value(fmt.Sprint((g + i) % 20))
			}
		}()
	}
	wg.Wait()
	admitted := 0
	for i := range 20 {
		v := fmt.Sprint(i)
		got := c.Value(v)
		if got != v && got != labelcap.Other {
			t.Fatalf("Value(%q) = %q", v, got)
		}
		if got == v {
			admitted++
		}
		if again := c.Value(v); again != got {
			t.Fatalf("Value(%q) = %q, then %q", v, got, again)
		}
	}
	if admitted != max {
		t.Fatalf("%d values admitted, want %d", admitted, max)
	}
}

// TestDepths: the sums are over the latest sample of each queue, and a
// reset forgets them all.
func TestDepths(t *testing.T) {
	var d labelcap.Depths
	for _, tc := range []struct {
		queue          string
		ready, delayed int
		sumR, sumD     int
	}{
		{"q2", 3, 4, 3, 4},
		{"q3", 5, 6, 8, 10},
		{"q2", 7, 0, 12, 6},
	} {
		if r, dl := d.Add(tc.queue, tc.ready, tc.delayed); r != tc.sumR || dl != tc.sumD {
			t.Fatalf("Add(%s, %d, %d) = %d, %d, want %d, %d", tc.queue, tc.ready, tc.delayed, r, dl, tc.sumR, tc.sumD)
		}
	}
	d.Reset()
	if r, dl := d.Add("q3", 1, 1); r != 1 || dl != 1 {
		t.Fatalf("after Reset: %d, %d, want 1, 1", r, dl)
	}
}
