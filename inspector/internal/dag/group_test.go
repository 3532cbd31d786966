package dag

import (
	"fmt"
	"reflect"
	"testing"
)

// groupsOf maps each group's ID to its members.
func groupsOf(d *Diagram) map[string][]string {
	out := map[string][]string{}
	for _, g := range d.Groups {
		out[g.ID] = g.Members
	}
	return out
}

func ids(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// wide is root -> prefix0..prefix(n-1) -> join.
func wide(prefix string, n int) []string {
	var edges []string
	for _, id := range ids(prefix, 0, n) {
		edges = append(edges, "root>"+id, id+">join")
	}
	return edges
}

func TestGroupSiblingsPastMaxLayerWidth(t *testing.T) {
	t.Parallel()
	// 12 siblings fit the default width: no group.
	d := mustLayout(t, graphOf(wide("s", 12)), Options{})
	if len(d.Groups) != 0 || len(d.Boxes) != 14 {
		t.Fatalf("12 siblings: %d groups, %d boxes", len(d.Groups), len(d.Boxes))
	}
	// 13 do not: one group of all 13, linked once from root and to join.
	d = mustLayout(t, graphOf(wide("s", 13)), Options{})
	want := map[string][]string{"group:s0": ids("s", 0, 13)}
	if got := groupsOf(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("13 siblings: groups %v, want %v", got, want)
	}
	var links []string
	for _, l := range d.Links {
		links = append(links, l.From+">"+l.To)
	}
	if !reflect.DeepEqual(links, []string{"root>group:s0", "group:s0>join"}) {
		t.Fatalf("links %v", links)
	}
	// The option moves the threshold.
	d = mustLayout(t, graphOf(wide("s", 13)), Options{MaxLayerWidth: 13})
	if len(d.Groups) != 0 {
		t.Fatalf("MaxLayerWidth 13: %d groups", len(d.Groups))
	}
	d = mustLayout(t, graphOf(wide("s", 3)), Options{MaxLayerWidth: 2})
	if len(d.Groups) != 1 {
		t.Fatalf("MaxLayerWidth 2, 3 siblings: %d groups", len(d.Groups))
	}
}

func TestGroupOnlySameParentsChildrenAndConditions(t *testing.T) {
	t.Parallel()
	edges := wide("s", 10)                        // 10 alike
	edges = append(edges, "root>o1", "o1>join")   // alike too
	edges = append(edges, "root>o2")              // no child
	edges = append(edges, "root~o3", "o3>join")   // another condition
	edges = append(edges, "root>o4", "o4>other")  // another child
	edges = append(edges, "root>o5", "x>o5")      // another parent
	edges = append(edges, "root!f1", "root!f2")   // alike among themselves
	d := mustLayout(t, graphOf(edges), Options{}) // layer 1: 17 tasks
	want := map[string][]string{
		"group:s0": append(ids("s", 0, 10), "o1"),
		"group:f1": {"f1", "f2"},
	}
	if got := groupsOf(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	checkGeometry(t, d)
}

func TestGroupParallelPipelinesStageByStage(t *testing.T) {
	t.Parallel()
	// root -> b_i -> c_i -> join: each b has its own child, yet the b's
	// are alike once the c's are grouped.
	var edges []string
	for i := range 20 {
		b, c := fmt.Sprint("b", i), fmt.Sprint("c", i)
		edges = append(edges, "root>"+b, b+">"+c, c+">join")
	}
	d := mustLayout(t, graphOf(edges), Options{})
	if got := order(d); !reflect.DeepEqual(got, [][]string{{"root"}, {"group:b0"}, {"group:c0"}, {"join"}}) {
		t.Fatalf("order %v", got)
	}
	if len(d.Links) != 3 || d.Links[1].From != "group:b0" || d.Links[1].To != "group:c0" {
		t.Fatalf("links %+v", d.Links)
	}
	// One pipeline that differs (a failure edge) stays apart.
	edges[1] = "b0!c0"
	d = mustLayout(t, graphOf(edges), Options{})
	g := groupsOf(d)
	if len(g) != 2 || len(g["group:b1"]) != 19 || len(g["group:c1"]) != 19 {
		t.Fatalf("groups %v", g)
	}
}

func TestGroupChainMiddle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, boxes, members int
	}{
		{MaxChainLength, MaxChainLength, 0},
		{MaxChainLength + 1, 2, MaxChainLength - 1},
		{10000, 2, 9998},
	} {
		d := mustLayout(t, chain(tc.n), Options{})
		if len(d.Boxes) != tc.boxes {
			t.Fatalf("chain of %d: %d boxes, want %d", tc.n, len(d.Boxes), tc.boxes)
		}
		if tc.members == 0 {
			if len(d.Groups) != 0 {
				t.Fatalf("chain of %d: %d groups", tc.n, len(d.Groups))
			}
			continue
		}
		if len(d.Groups) != 1 || len(d.Groups[0].Members) != tc.members || !d.Groups[0].Chain {
			t.Fatalf("chain of %d: groups %+v", tc.n, d.Groups)
		}
		g := d.Groups[0]
		if g.Members[0] != "step-00001" || g.Members[tc.members-1] != fmt.Sprintf("step-%05d", tc.n-2) || g.Layer != 1 {
			t.Fatalf("chain of %d: group %s..%s in layer %d", tc.n, g.Members[0], g.Members[tc.members-1], g.Layer)
		}
		if g.Label != "chain of "+thousands(tc.members)+" tasks" {
			t.Fatalf("chain of %d: label %q", tc.n, g.Label)
		}
		if got := order(d); !reflect.DeepEqual(got, [][]string{{"step-00000"}, {g.ID}, {fmt.Sprintf("step-%05d", tc.n-1)}}) {
			t.Fatalf("chain of %d: order %v", tc.n, got)
		}
	}
	// A chain hanging off a fan-in: its first box is the fan-in's target.
	edges := []string{"a>j", "b>j"}
	prev := "j"
	for i := range 30 {
		next := fmt.Sprint("k", i)
		edges = append(edges, prev+">"+next)
		prev = next
	}
	d := mustLayout(t, graphOf(edges), Options{})
	if got := order(d); !reflect.DeepEqual(got, [][]string{{"a", "b"}, {"j"}, {"group:k0"}, {"k29"}}) {
		t.Fatalf("fan-in then chain: order %v", got)
	}
}

func TestGroupStateAndCounts(t *testing.T) {
	t.Parallel()
	g := fanOut(30) // states cycle succeeded, running, pending
	g.Nodes[5].State = "failed"
	g.Nodes[6].State = "Weird<state>"
	d := mustLayout(t, g, Options{})
	if len(d.Groups) != 1 {
		t.Fatalf("%d groups", len(d.Groups))
	}
	gr := d.Groups[0]
	want := []StateCount{{"failed", 1}, {"running", 9}, {"pending", 10}, {"succeeded", 9}, {"Weird<state>", 1}}
	if gr.State != "failed" || !reflect.DeepEqual(gr.Counts, want) {
		t.Fatalf("state %q counts %v, want failed %v", gr.State, gr.Counts, want)
	}
	if gr.Label != "shard-000* ×30" {
		t.Fatalf("label %q", gr.Label)
	}
}

func TestGroupLabelHelpers(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := commonPrefix([]string{"héllo", "hé"}); got != "hé" {
		t.Errorf("prefix %q", got)
	}
	// "é" and "è" share their first byte: the prefix stops before both.
	if got := commonPrefix([]string{"aé", "aè"}); got != "a" {
		t.Errorf("prefix %q", got)
	}
}

func TestGroupIDNeverATaskName(t *testing.T) {
	t.Parallel()
	g := graphOf(wide("s", 13), "group:s0", "group:s0+")
	d := mustLayout(t, g, Options{})
	if len(d.Groups) != 1 || d.Groups[0].ID != "group:s0++" {
		t.Fatalf("groups %+v", d.Groups)
	}
}
