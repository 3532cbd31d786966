package dag

import (
	"cmp"
	"slices"
)

// item is one slot of a layer: a box, or a dummy a long link passes
// through.
type item struct {
	box      int32 // the box's index, or -1 for a dummy
	layer    int32
	pos      int32
	up, down []int32 // the items linked to in the layer above and below
	x        float64 // the centre
}

// route is a link between boxes as the items it passes, first box to last.
type route struct {
	from, to int32 // boxes
	cond     uint8
	items    []int32
}

// plan is the layered graph being ordered and placed.
type plan struct {
	items  []item
	layers [][]int32 // item indexes per layer, in order
	routes []route

	scratch       []float64 // for target
	transposeLeft int       // of transposeBudget
}

// newPlan puts each box in its layer and a dummy in every layer a link
// crosses, so a long link takes a slot between boxes instead of running
// over them. It fails with ErrTooLarge past maxSegments link segments.
func newPlan(links *adjGraph, layer []int32, layers, maxSegments int) (*plan, error) {
	nb := len(layer)
	segments := 0
	for b := range int32(nb) {
		for _, c := range links.children(b) {
			segments += int(layer[c.to] - layer[b])
		}
	}
	if segments > maxSegments {
		return nil, errTooLarge("%d link segments, more than %d", segments, maxSegments)
	}
	p := &plan{items: make([]item, nb, nb+segments), layers: make([][]int32, layers), transposeLeft: transposeBudget}
	for b := range nb {
		p.items[b] = item{box: int32(b), layer: layer[b]}
		p.layers[layer[b]] = append(p.layers[layer[b]], int32(b))
	}
	for b := range int32(nb) {
		for _, c := range links.children(b) {
			r := route{from: b, to: c.to, cond: c.cond, items: []int32{b}}
			prev := b
			for l := layer[b] + 1; l <= layer[c.to]; l++ {
				cur := c.to
				if l < layer[c.to] {
					cur = int32(len(p.items))
					p.items = append(p.items, item{box: -1, layer: l})
					p.layers[l] = append(p.layers[l], cur)
				}
				p.items[prev].down = append(p.items[prev].down, cur)
				p.items[cur].up = append(p.items[cur].up, prev)
				r.items = append(r.items, cur)
				prev = cur
			}
			p.routes = append(p.routes, r)
		}
	}
	for _, ids := range p.layers {
		for i, id := range ids {
			p.items[id].pos = int32(i)
		}
	}
	return p, nil
}

// order sorts every layer by barycentre sweeps, down then up, and keeps
// the order with the fewest crossings seen.
func (p *plan) order(passes int) {
	best := p.crossings()
	saved := p.positions()
	for i := 0; i < passes && best > 0; i++ {
		for l := 1; l < len(p.layers); l++ {
			p.sortLayer(l, true)
		}
		for l := len(p.layers) - 2; l >= 0; l-- {
			p.sortLayer(l, false)
		}
		p.transpose()
		if c := p.crossings(); c < best {
			best, saved = c, p.positions()
		}
	}
	for l, ids := range saved {
		copy(p.layers[l], ids)
		for i, id := range ids {
			p.items[id].pos = int32(i)
		}
	}
}

// transposeBudget bounds the link pairs transpose compares over one
// layout, so a large graph (or a box with thousands of links) costs a few
// milliseconds more at most.
const transposeBudget = 500_000

// transpose swaps neighbours within layers while a swap cuts the
// crossings of their links with the layers above and below: the local
// fix barycentres miss when two boxes tie or pull both ways.
func (p *plan) transpose() {
	budget := &p.transposeLeft
	for improved := true; improved && *budget > 0; {
		improved = false
		for _, ids := range p.layers {
			for i := 0; i+1 < len(ids) && *budget > 0; i++ {
				u, v := ids[i], ids[i+1]
				keep, swap := p.pairCrossings(u, v, budget), p.pairCrossings(v, u, budget)
				if swap < keep {
					ids[i], ids[i+1] = v, u
					p.items[u].pos, p.items[v].pos = int32(i+1), int32(i)
					improved = true
				}
			}
		}
	}
}

// pairCrossings counts the crossings between u's links and v's, with u
// left of v, charging the pairs compared to budget.
func (p *plan) pairCrossings(u, v int32, budget *int) int {
	a, b := &p.items[u], &p.items[v]
	c := 0
	for _, x := range a.up {
		for _, y := range b.up {
			if p.items[x].pos > p.items[y].pos {
				c++
			}
		}
	}
	for _, x := range a.down {
		for _, y := range b.down {
			if p.items[x].pos > p.items[y].pos {
				c++
			}
		}
	}
	*budget -= len(a.up)*len(b.up) + len(a.down)*len(b.down)
	return c
}

func (p *plan) positions() [][]int32 {
	out := make([][]int32, len(p.layers))
	for l, ids := range p.layers {
		out[l] = slices.Clone(ids)
	}
	return out
}

// sortLayer orders layer l by the mean position of each item's
// neighbours above (up) or below; an item without any keeps its place.
func (p *plan) sortLayer(l int, up bool) {
	type keyed struct {
		id, pos int32
		key     float64
	}
	ids := p.layers[l]
	ks := make([]keyed, len(ids))
	for i, id := range ids {
		it := &p.items[id]
		nb := it.down
		if up {
			nb = it.up
		}
		key := float64(it.pos)
		if len(nb) > 0 {
			sum := 0.0
			for _, o := range nb {
				sum += float64(p.items[o].pos)
			}
			key = sum / float64(len(nb))
		}
		ks[i] = keyed{id: id, key: key}
	}
	// Ties keep the previous order: the slice is in position order, so
	// comparing indexes (ids differ) after keys makes the sort stable.
	for i := range ks {
		ks[i].pos = int32(i)
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	for i, k := range ks {
		ids[i] = k.id
		p.items[k.id].pos = int32(i)
	}
}

// crossings counts the pairs of link segments that cross, over every pair
// of adjacent layers: the inversions of the lower ends once the segments
// are sorted by their upper ends, counted with a Fenwick tree.
func (p *plan) crossings() int {
	total := 0
	var segs [][2]int32
	var tree []int
	for l := 0; l+1 < len(p.layers); l++ {
		segs = segs[:0]
		for _, id := range p.layers[l] {
			for _, d := range p.items[id].down {
				segs = append(segs, [2]int32{p.items[id].pos, p.items[d].pos})
			}
		}
		slices.SortFunc(segs, func(a, b [2]int32) int {
			if c := cmp.Compare(a[0], b[0]); c != 0 {
				return c
			}
			return cmp.Compare(a[1], b[1])
		})
		n := len(p.layers[l+1])
		tree = slices.Grow(tree[:0], n+1)[:n+1]
		clear(tree)
		for i, s := range segs {
			// Segments seen so far whose lower end is right of s cross it.
			le := 0
			for j := int(s[1]) + 1; j > 0; j -= j & -j {
				le += tree[j]
			}
			total += i - le
			for j := int(s[1]) + 1; j <= n; j += j & -j {
				tree[j]++
			}
		}
	}
	return total
}
