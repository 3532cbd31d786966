package dag

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestLayoutLayersByLongestPath(t *testing.T) {
	t.Parallel()
	// c is a child of a and of b; its layer is one below b, the deepest.
	d := mustLayout(t, graphOf([]string{"a>b", "b>c", "a>c", "c>d", "x>d"}), Options{})
	layers := map[string]int{}
	for _, b := range d.Boxes {
		layers[b.ID] = b.Layer
	}
	want := map[string]int{"a": 0, "x": 0, "b": 1, "c": 2, "d": 3}
	if !reflect.DeepEqual(layers, want) {
		t.Fatalf("layers %v, want %v", layers, want)
	}
}

func TestLayoutOrderCutsCrossings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edges []string
		want  [][]string
	}{
		{"crossed pair", []string{"a>d", "b>c"}, [][]string{{"a", "b"}, {"d", "c"}}},
		{"reversed three", []string{"r1>z", "r2>y", "r3>x"}, [][]string{{"r1", "r2", "r3"}, {"z", "y", "x"}}},
		{"diamond", []string{"a>b", "a>c", "b>d", "c>d"}, [][]string{{"a"}, {"b", "c"}, {"d"}}},
		// p's children sit under p, q's under q: the down sweep puts
		// q's child right of p's though q's was given first.
		{"two families", []string{"q>q1", "p>p1", "p>p2", "q>q2"}, [][]string{{"q", "p"}, {"q1", "q2", "p1", "p2"}}},
		// The up sweep orders roots by their children: c, a parent of
		// both, moves between a (over y) and b (over x).
		{"roots follow children", []string{"a>y", "b>x", "c>x", "c>y"}, [][]string{{"a", "c", "b"}, {"y", "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustLayout(t, graphOf(tc.edges), Options{})
			if got := order(d); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// checkGeometry checks what every diagram must hold: boxes on the grid,
// inside the diagram, apart within a layer and between layers; links from
// the bottom of their source to the top of their target, clear of the
// corners, no two at one port; a link's straight runs through a layer
// clear of that layer's boxes.
func checkGeometry(t *testing.T, d *Diagram) {
	t.Helper()
	type rect struct {
		id         string
		layer      int
		x, y, w, h float64
	}
	var rects []rect
	at := map[string]rect{}
	for _, b := range d.Boxes {
		rects = append(rects, rect{b.ID, b.Layer, b.X, b.Y, b.W, b.H})
	}
	for _, g := range d.Groups {
		rects = append(rects, rect{g.ID, g.Layer, g.X, g.Y, g.W, g.H})
	}
	for _, r := range rects {
		at[r.id] = r
		if math.Mod(r.x, grid) != 0 || math.Mod(r.y, grid) != 0 {
			t.Errorf("%s at (%v,%v), off the %v grid", r.id, r.x, r.y, grid)
		}
		if r.x < margin || r.y < margin || r.x+r.w > d.Width-margin || r.y+r.h > d.Height-margin {
			t.Errorf("%s at (%v,%v) outside %vx%v", r.id, r.x, r.y, d.Width, d.Height)
		}
	}
	for i, a := range rects {
		for _, b := range rects[i+1:] {
			if a.x < b.x+b.w+boxGap && b.x < a.x+a.w+boxGap && a.y < b.y+b.h+layerGap && b.y < a.y+a.h+layerGap {
				t.Errorf("%s (%v,%v) and %s (%v,%v) overlap or touch", a.id, a.x, a.y, b.id, b.x, b.y)
			}
		}
	}
	ports := map[Point]bool{}
	for _, l := range d.Links {
		from, to := at[l.From], at[l.To]
		if len(l.Points) < 4 || (len(l.Points)-1)%3 != 0 {
			t.Fatalf("%s->%s: %d points", l.From, l.To, len(l.Points))
		}
		first, last := l.Points[0], l.Points[len(l.Points)-1]
		if first.Y != from.y+from.h || first.X < from.x+portInset || first.X > from.x+from.w-portInset ||
			last.Y != to.y || last.X < to.x+portInset || last.X > to.x+to.w-portInset {
			t.Errorf("%s->%s runs %v to %v", l.From, l.To, first, last)
		}
		if ports[first] || ports[last] {
			t.Errorf("%s->%s shares a port at %v or %v", l.From, l.To, first, last)
		}
		ports[first], ports[last] = true, true
		for i := 1; i+2 < len(l.Points); i += 3 {
			p, q := l.Points[i-1], l.Points[i+2]
			if p.X != q.X || q.Y-p.Y != BoxHeight {
				continue // a curve between layers, not a run through one
			}
			for _, r := range rects {
				if r.y == p.Y && p.X > r.x-dummyGap && p.X < r.x+r.w+dummyGap {
					t.Errorf("%s->%s runs through %s at x=%v", l.From, l.To, r.id, p.X)
				}
			}
		}
	}
}

func TestLayoutNoOverlap(t *testing.T) {
	t.Parallel()
	for seed := range uint64(30) {
		g := randomDAG(seed, 60, 6)
		d := mustLayout(t, g, Options{MaxLayerWidth: 1000})
		if len(d.Boxes) != len(g.Nodes) {
			t.Fatalf("seed %d: %d boxes for %d tasks", seed, len(d.Boxes), len(g.Nodes))
		}
		checkGeometry(t, d)
	}
	checkGeometry(t, mustLayout(t, fanOut(100), Options{}))
	checkGeometry(t, mustLayout(t, graphOf([]string{"a>b", "b>c", "c>d", "a>d", "a>c", "x>d"}), Options{}))
}

func TestLayoutIsDeterministic(t *testing.T) {
	t.Parallel()
	for _, g := range []*Graph{randomDAG(7, 300, 10), fanOut(500), chain(100)} {
		var first []byte
		for range 3 {
			var buf bytes.Buffer
			if err := mustLayout(t, g, Options{}).WriteSVG(&buf); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = buf.Bytes()
			} else if !bytes.Equal(first, buf.Bytes()) {
				t.Fatal("two layouts of one graph differ")
			}
		}
	}
}

func TestLayoutRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		g    *Graph
		opt  Options
		want error
	}{
		{"nil", nil, Options{}, ErrInvalidGraph},
		{"empty ID", &Graph{Nodes: []Node{{}}}, Options{}, ErrInvalidGraph},
		{"duplicate node", &Graph{Nodes: []Node{{ID: "a"}, {ID: "a"}}}, Options{}, ErrInvalidGraph},
		{"unknown from", &Graph{Nodes: []Node{{ID: "a"}}, Edges: []Edge{{From: "z", To: "a"}}}, Options{}, ErrInvalidGraph},
		{"unknown to", &Graph{Nodes: []Node{{ID: "a"}}, Edges: []Edge{{From: "a", To: "z"}}}, Options{}, ErrInvalidGraph},
		{"self", graphOf(nil, "a"), Options{}, nil}, // filled below
		{"duplicate edge", graphOf([]string{"a>b", "a~b"}), Options{}, ErrInvalidGraph},
		{"bad condition", &Graph{Nodes: []Node{{ID: "a"}, {ID: "b"}}, Edges: []Edge{{From: "a", To: "b", Condition: "always"}}}, Options{}, ErrInvalidGraph},
		{"cycle", graphOf([]string{"a>b", "b>c", "c>a"}), Options{}, ErrInvalidGraph},
		{"negative width", graphOf([]string{"a>b"}), Options{MaxLayerWidth: -1}, ErrInvalidOptions},
	} {
		if tc.name == "self" {
			tc.g.Edges = []Edge{{From: "a", To: "a"}}
			tc.want = ErrInvalidGraph
		}
		if _, err := Layout(tc.g, tc.opt); !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestLayoutEmptyGraph(t *testing.T) {
	t.Parallel()
	d := mustLayout(t, &Graph{}, Options{})
	if d.Width != 2*margin || d.Height != 2*margin || len(d.Boxes)+len(d.Groups)+len(d.Links) != 0 {
		t.Fatalf("empty graph drew %+v", d)
	}
}

func TestLayoutTooLarge(t *testing.T) {
	t.Parallel()
	// A ladder of two-task layers: no layer is wide and no task is in a
	// chain, so nothing groups: 2,002 boxes.
	ladder := &Graph{}
	for i := range 1001 {
		x, y := Node{ID: "x" + itoa(i)}, Node{ID: "y" + itoa(i)}
		ladder.Nodes = append(ladder.Nodes, x, y)
		if i > 0 {
			px, py := "x"+itoa(i-1), "y"+itoa(i-1)
			ladder.Edges = append(ladder.Edges, Edge{From: px, To: x.ID}, Edge{From: px, To: y.ID}, Edge{From: py, To: y.ID})
		}
	}
	if _, err := Layout(ladder, Options{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("2,002 boxes: error %v, want ErrTooLarge", err)
	}
	ladder.Nodes, ladder.Edges = ladder.Nodes[:2000], ladder.Edges[:3*999]
	checkGeometry(t, mustLayout(t, ladder, Options{}))

	// 150 tasks in layer 0 each linked to all 150 in layer 1, drawn box
	// by box: 22,500 segments.
	dense := &Graph{}
	for i := range 300 {
		dense.Nodes = append(dense.Nodes, Node{ID: itoa(i)})
	}
	for i := range 150 {
		for j := 150; j < 300; j++ {
			dense.Edges = append(dense.Edges, Edge{From: itoa(i), To: itoa(j)})
		}
	}
	if _, err := Layout(dense, Options{MaxLayerWidth: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("22,500 segments: error %v, want ErrTooLarge", err)
	}
	// Grouped, the same graph is two boxes and one link.
	d := mustLayout(t, dense, Options{})
	if len(d.Groups) != 2 || len(d.Boxes) != 0 || len(d.Links) != 1 {
		t.Fatalf("grouped dense graph: %d groups, %d boxes, %d links", len(d.Groups), len(d.Boxes), len(d.Links))
	}
}

// TestLayoutDrawsEveryTaskAndEdge checks, on random graphs with wide
// layers grouped, that each task is drawn exactly once (as a box or in a
// group) and each edge by a link between the boxes holding its ends, with
// its condition, and that nothing else is linked.
func TestLayoutDrawsEveryTaskAndEdge(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		g := randomDAG(seed, 200, 3)
		// Make a wide layer: 30 alike children of t0, joining into t1.
		for i := range 30 {
			id := "w" + itoa(i)
			g.Nodes = append(g.Nodes, Node{ID: id, State: stateOrder[i%len(stateOrder)]})
			g.Edges = append(g.Edges, Edge{From: "t0", To: id}, Edge{From: id, To: "t199"})
		}
		d := mustLayout(t, g, Options{MaxLayerWidth: 4 + int(seed%5)})
		checkGeometry(t, d)
		boxOf := map[string]string{}
		for _, b := range d.Boxes {
			boxOf[b.ID] = b.ID
		}
		for _, gr := range d.Groups {
			if len(gr.Members) < 2 {
				t.Fatalf("seed %d: group %s of %d", seed, gr.ID, len(gr.Members))
			}
			for _, m := range gr.Members {
				if _, dup := boxOf[m]; dup {
					t.Fatalf("seed %d: %s drawn twice", seed, m)
				}
				boxOf[m] = gr.ID
			}
		}
		if len(boxOf) != len(g.Nodes) {
			t.Fatalf("seed %d: %d tasks drawn of %d", seed, len(boxOf), len(g.Nodes))
		}
		want := map[string]bool{}
		for _, e := range g.Edges {
			from, to := boxOf[e.From], boxOf[e.To]
			if from == to {
				continue // inside a chain group
			}
			cond := e.Condition
			if cond == "" {
				cond = "success"
			}
			want[from+">"+to+" "+cond] = true
		}
		got := map[string]bool{}
		for _, l := range d.Links {
			k := l.From + ">" + l.To + " " + l.Condition
			if got[k] {
				t.Fatalf("seed %d: link %s twice", seed, k)
			}
			got[k] = true
		}
		for k := range want {
			if !got[k] {
				t.Errorf("seed %d: no link %s", seed, k)
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("seed %d: link %s from no edge", seed, k)
			}
		}
	}
}

// TestLayoutKeepsColumnsStraight: in a ladder (x_i -> x_i+1, x_i -> y_i+1,
// y_i -> y_i+1) each column stays straight; aiming at the mean of the
// parents instead of the median drifts the ladder sideways layer after
// layer.
func TestLayoutKeepsColumnsStraight(t *testing.T) {
	t.Parallel()
	ladder := &Graph{}
	for i := range 10 {
		ladder.Nodes = append(ladder.Nodes, Node{ID: "x" + itoa(i)}, Node{ID: "y" + itoa(i)})
		if i > 0 {
			px, py := "x"+itoa(i-1), "y"+itoa(i-1)
			ladder.Edges = append(ladder.Edges, Edge{From: px, To: "x" + itoa(i)}, Edge{From: px, To: "y" + itoa(i)}, Edge{From: py, To: "y" + itoa(i)})
		}
	}
	d := mustLayout(t, ladder, Options{})
	columns := map[byte]map[float64]bool{'x': {}, 'y': {}}
	for _, b := range d.Boxes {
		columns[b.ID[0]][b.X] = true
	}
	if len(columns['x']) != 1 || len(columns['y']) != 1 {
		t.Fatalf("columns at x %v and y %v, want one each", columns['x'], columns['y'])
	}
	checkGeometry(t, d)
}

// TestLayoutTransposeCutsCrossings: swapping neighbours after the
// barycentre sweeps leaves fewer crossings, here about a quarter fewer
// over 50 random graphs (a graph may end with one or two more, as the
// sweeps then start from another order).
func TestLayoutTransposeCutsCrossings(t *testing.T) {
	t.Parallel()
	crossings := func(g *Graph, budget int) int {
		_, a, err := index(g)
		if err != nil {
			t.Fatal(err)
		}
		layer, n, _, _ := longestPath(a)
		boxes, boxOf := siblingBoxes(a, layer, n, 1000)
		p, err := newPlan(boxLinks(a, boxes, boxOf), layer, n, MaxSegments)
		if err != nil {
			t.Fatal(err)
		}
		p.transposeLeft = budget
		p.order(orderPasses)
		return p.crossings()
	}
	with, without := 0, 0
	for seed := range uint64(50) {
		g := randomDAG(seed, 150, 4)
		with += crossings(g, transposeBudget)
		without += crossings(g, 0)
	}
	if with*5 > without*4 {
		t.Fatalf("%d crossings with transpose, %d without: not a fifth fewer", with, without)
	}
	t.Logf("%d crossings with transpose, %d without", with, without)
}
