package dag

import (
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
