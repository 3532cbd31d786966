package dag

import (
	"fmt"
	"io"
	"testing"
)

// The sizes the run page meets at its largest: a 10,000-task fan-out
// (grouped into one box), a 10,000-task chain (its middle grouped), and a
// graph that draws close to MaxBoxes boxes, none grouped.

func benchLayout(b *testing.B, g *Graph, opt Options) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Layout(g, opt); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLayoutSVG(b *testing.B, g *Graph, opt Options) {
	b.ReportAllocs()
	for b.Loop() {
		d, err := Layout(g, opt)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.WriteSVG(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLayoutFanOut10k(b *testing.B) { benchLayout(b, fanOut(10000), Options{}) }

func BenchmarkLayoutChain10k(b *testing.B) { benchLayout(b, chain(10000), Options{}) }

// BenchmarkLayoutRandom2k draws 2,000 tasks box by box, 2,829 edges
// making 19,562 link segments, both close to the limits: the ordering and
// placement sweeps at their largest.
func BenchmarkLayoutRandom2k(b *testing.B) {
	benchLayout(b, randomDAG(1, 2000, 12), Options{MaxLayerWidth: 2000})
}

func BenchmarkLayoutSVGFanOut10k(b *testing.B) { benchLayoutSVG(b, fanOut(10000), Options{}) }

func BenchmarkLayoutSVGChain10k(b *testing.B) { benchLayoutSVG(b, chain(10000), Options{}) }

func BenchmarkLayoutSVGRandom2k(b *testing.B) {
	benchLayoutSVG(b, randomDAG(1, 2000, 12), Options{MaxLayerWidth: 2000})
}

// BenchmarkLayoutCascade10k is the sibling refinement's slow case: 100
// parallel chains of 100 tasks under one root, the first with an extra
// child at its end, a difference that splits one layer per pass.
func BenchmarkLayoutCascade10k(b *testing.B) {
	g := &Graph{Nodes: []Node{{ID: "root"}, {ID: "extra"}}}
	for l := range 100 {
		for i := range 100 {
			id := fmt.Sprint(l, "-", i)
			g.Nodes = append(g.Nodes, Node{ID: id})
			from := "root"
			if l > 0 {
				from = fmt.Sprint(l-1, "-", i)
			}
			g.Edges = append(g.Edges, Edge{From: from, To: id})
		}
	}
	g.Edges = append(g.Edges, Edge{From: "99-0", To: "extra"})
	benchLayout(b, g, Options{})
}
