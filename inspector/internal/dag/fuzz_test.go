package dag

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzLayout reads a graph from bytes: each byte pair is an edge between
// two of up to 64 tasks (low six bits each), the pair's top bits the
// condition, with edges that would close a cycle or repeat dropped. Any
// graph lays out without panic, passes the geometry checks and writes
// well-formed SVG.
func FuzzLayout(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 0, 2}, uint8(0))
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 4, 1, 5, 2, 5, 3, 5, 4, 5}, uint8(2))
	f.Add([]byte{0x40, 1, 0x81, 2, 2, 3, 3, 4, 4, 5, 5, 6}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, width uint8) {
		g := &Graph{}
		for i := range 64 {
			g.Nodes = append(g.Nodes, Node{ID: "n<&" + itoa(i), State: stateOrder[i%len(stateOrder)]})
		}
		seen := map[[2]int]bool{}
		for i := 0; i+1 < len(data); i += 2 {
			a, b := int(data[i]&63), int(data[i+1]&63)
			if a > b {
				a, b = b, a // edges point to higher indexes: no cycle
			}
			if a == b || seen[[2]int{a, b}] {
				continue
			}
			seen[[2]int{a, b}] = true
			g.Edges = append(g.Edges, Edge{From: g.Nodes[a].ID, To: g.Nodes[b].ID, Condition: condNames[int(data[i]>>6)%3]})
		}
		d, err := Layout(g, Options{MaxLayerWidth: int(width % 16)})
		if errors.Is(err, ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkGeometry(t, d)
		var buf bytes.Buffer
		if err := d.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		parseSVG(t, buf.Bytes())
	})
}
