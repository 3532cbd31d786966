package dag

import "fmt"

// Condition codes: an edge's condition as a small number, in the order of
// condNames.
const (
	condSuccess uint8 = iota
	condCompletion
	condFailure
)

var condNames = [...]string{"success", "completion", "failure"}

// adj is one end of an edge: the node (or box) at the other end and the
// edge's condition.
type adj struct {
	to   int32
	cond uint8
}

// adjGraph is a DAG as adjacency lists in both directions, each stored
// flat (a vertex's list is a range of one array) so building one costs a
// few allocations whatever its size. Lists keep the order edges were
// given in, so everything derived from them is deterministic.
type adjGraph struct {
	childOff, parentOff   []int32 // vertex v's list is [off[v], off[v+1])
	childList, parentList []adj
}

// edgeRec is one edge given to buildAdj.
type edgeRec struct {
	from, to int32
	cond     uint8
}

func buildAdj(n int, edges []edgeRec) *adjGraph {
	a := &adjGraph{
		childOff: make([]int32, n+1), parentOff: make([]int32, n+1),
		childList: make([]adj, len(edges)), parentList: make([]adj, len(edges)),
	}
	for _, e := range edges {
		a.childOff[e.from+1]++
		a.parentOff[e.to+1]++
	}
	for v := range n {
		a.childOff[v+1] += a.childOff[v]
		a.parentOff[v+1] += a.parentOff[v]
	}
	// Fill each list from its start, moving the start on, then restore.
	for _, e := range edges {
		a.childList[a.childOff[e.from]] = adj{e.to, e.cond}
		a.childOff[e.from]++
		a.parentList[a.parentOff[e.to]] = adj{e.from, e.cond}
		a.parentOff[e.to]++
	}
	for v := n; v > 0; v-- {
		a.childOff[v] = a.childOff[v-1]
		a.parentOff[v] = a.parentOff[v-1]
	}
	a.childOff[0], a.parentOff[0] = 0, 0
	return a
}

func (a *adjGraph) size() int { return len(a.childOff) - 1 }

func (a *adjGraph) children(v int32) []adj {
	return a.childList[a.childOff[v]:a.childOff[v+1]]
}

func (a *adjGraph) parents(v int32) []adj {
	return a.parentList[a.parentOff[v]:a.parentOff[v+1]]
}

// condCode parses an edge condition; "" is "success", as in a workflow
// definition.
func condCode(s string) (uint8, bool) {
	switch s {
	case "", "success":
		return condSuccess, true
	case "completion":
		return condCompletion, true
	case "failure":
		return condFailure, true
	}
	return 0, false
}

// index validates g and returns its nodes' indexes by ID and its edges as
// an adjGraph over node indexes.
func index(g *Graph) (map[string]int32, *adjGraph, error) {
	ids := make(map[string]int32, len(g.Nodes))
	for i, n := range g.Nodes {
		if n.ID == "" {
			return nil, nil, fmt.Errorf("%w: node %d has no ID", ErrInvalidGraph, i)
		}
		if _, dup := ids[n.ID]; dup {
			return nil, nil, fmt.Errorf("%w: node %q given twice", ErrInvalidGraph, n.ID)
		}
		ids[n.ID] = int32(i)
	}
	edges := make([]edgeRec, len(g.Edges))
	for i, e := range g.Edges {
		from, ok := ids[e.From]
		if !ok {
			return nil, nil, fmt.Errorf("%w: edge from unknown node %q", ErrInvalidGraph, e.From)
		}
		to, ok := ids[e.To]
		if !ok {
			return nil, nil, fmt.Errorf("%w: edge to unknown node %q", ErrInvalidGraph, e.To)
		}
		if from == to {
			return nil, nil, fmt.Errorf("%w: node %q depends on itself", ErrInvalidGraph, e.From)
		}
		cond, ok := condCode(e.Condition)
		if !ok {
			return nil, nil, fmt.Errorf("%w: edge %q -> %q has condition %q", ErrInvalidGraph, e.From, e.To, e.Condition)
		}
		edges[i] = edgeRec{from, to, cond}
	}
	a := buildAdj(len(g.Nodes), edges)
	// A repeated edge: stamp each child with its parent's index + 1.
	stamp := make([]int32, len(g.Nodes))
	for v := range int32(len(g.Nodes)) {
		for _, c := range a.children(v) {
			if stamp[c.to] == v+1 {
				return nil, nil, fmt.Errorf("%w: edge %q -> %q given twice", ErrInvalidGraph, g.Nodes[v].ID, g.Nodes[c.to].ID)
			}
			stamp[c.to] = v + 1
		}
	}
	return ids, a, nil
}

// longestPath layers a DAG: a root is in layer 0, any other vertex one
// layer below its deepest parent. It answers the layers and how many there
// are, or the index of a vertex on a cycle.
func longestPath(a *adjGraph) (layer []int32, n int, cyclic int, err error) {
	v := a.size()
	layer = make([]int32, v)
	indeg := make([]int32, v)
	queue := make([]int32, 0, v)
	for i := range v {
		indeg[i] = int32(len(a.parents(int32(i))))
		if indeg[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	// Kahn's order: a vertex is taken once all its parents are, so its
	// layer is final when it is taken.
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		if int(layer[u]) >= n {
			n = int(layer[u]) + 1
		}
		for _, c := range a.children(u) {
			if layer[u]+1 > layer[c.to] {
				layer[c.to] = layer[u] + 1
			}
			indeg[c.to]--
			if indeg[c.to] == 0 {
				queue = append(queue, c.to)
			}
		}
	}
	if len(queue) < v {
		for i := range v {
			if indeg[i] > 0 {
				return nil, 0, i, ErrInvalidGraph
			}
		}
	}
	return layer, n, -1, nil
}
