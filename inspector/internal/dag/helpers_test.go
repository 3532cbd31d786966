package dag

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// graphOf builds a graph from "a>b" success edges, "a~b" completion and
// "a!b" failure; nodes come in order of first mention, then any in extra.
func graphOf(edges []string, extra ...string) *Graph {
	g := &Graph{}
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			g.Nodes = append(g.Nodes, Node{ID: id})
		}
	}
	conds := map[byte]string{'>': "success", '~': "completion", '!': "failure"}
	for _, e := range edges {
		for i := 0; i < len(e); i++ {
			if c, ok := conds[e[i]]; ok {
				add(e[:i])
				add(e[i+1:])
				g.Edges = append(g.Edges, Edge{From: e[:i], To: e[i+1:], Condition: c})
				break
			}
		}
	}
	for _, id := range extra {
		add(id)
	}
	return g
}

func mustLayout(t testing.TB, g *Graph, opt Options) *Diagram {
	t.Helper()
	d, err := Layout(g, opt)
	if err != nil {
		t.Fatalf("Layout: %v", err)
	}
	return d
}

// order lists each layer's boxes (tasks and groups) by position.
func order(d *Diagram) [][]string {
	var out [][]string
	put := func(layer, pos int, id string) {
		for len(out) <= layer {
			out = append(out, nil)
		}
		for len(out[layer]) <= pos {
			out[layer] = append(out[layer], "")
		}
		out[layer][pos] = id
	}
	for _, b := range d.Boxes {
		put(b.Layer, b.Pos, b.ID)
	}
	for _, g := range d.Groups {
		put(g.Layer, g.Pos, g.ID)
	}
	for l, ids := range out {
		for p, id := range ids {
			if id == "" {
				panic(fmt.Sprintf("layer %d has no box at %d: %v", l, p, ids))
			}
		}
	}
	return out
}

// fanOut is root -> n tasks -> join.
func fanOut(n int) *Graph {
	g := &Graph{Nodes: []Node{{ID: "root", State: "succeeded"}, {ID: "join"}}}
	for i := range n {
		id := fmt.Sprintf("shard-%05d", i)
		g.Nodes = append(g.Nodes, Node{ID: id, State: []string{"succeeded", "running", "pending"}[i%3]})
		g.Edges = append(g.Edges, Edge{From: "root", To: id}, Edge{From: id, To: "join"})
	}
	return g
}

// chain is n tasks in a line.
func chain(n int) *Graph {
	g := &Graph{}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("step-%05d", i), State: "pending"})
		if i > 0 {
			g.Edges = append(g.Edges, Edge{From: g.Nodes[i-1].ID, To: g.Nodes[i].ID})
		}
	}
	return g
}

// randomDAG has n tasks; each links to up to three later tasks at most
// span ahead, with random conditions.
func randomDAG(seed uint64, n, span int) *Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	g := &Graph{}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("t%d", i), State: stateOrder[r.IntN(len(stateOrder))]})
	}
	for i := range n {
		seen := map[int]bool{}
		for range r.IntN(4) {
			j := i + 1 + r.IntN(span)
			if j >= n || seen[j] {
				continue
			}
			seen[j] = true
			g.Edges = append(g.Edges, Edge{From: g.Nodes[i].ID, To: g.Nodes[j].ID, Condition: condNames[r.IntN(3)]})
		}
	}
	return g
}

func itoa(i int) string { return fmt.Sprint(i) }
