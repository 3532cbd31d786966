package dag

import (
	"cmp"
	"math"
	"slices"
)

// Geometry, in SVG user units. Separations between slot centres are
// multiples of grid, so snapping to the grid keeps them.
const (
	// BoxWidth and BoxHeight are the size of every task and group box.
	BoxWidth, BoxHeight = 160.0, 48.0
	boxGap              = 24.0 // between two boxes of a layer
	dummyGap            = 16.0 // between a long link and its neighbours
	layerGap            = 64.0 // between two layers, where links curve
	margin              = 16.0
	grid                = 8.0
)

func (p *plan) halfWidth(id int32) float64 {
	if p.items[id].box < 0 {
		return 0
	}
	return BoxWidth / 2
}

// sep is the least distance between the centres of neighbours a and b.
func (p *plan) sep(a, b int32) float64 {
	gap := dummyGap
	if p.items[a].box >= 0 && p.items[b].box >= 0 {
		gap = boxGap
	}
	return p.halfWidth(a) + p.halfWidth(b) + gap
}

// Neighbours place uses to centre an item.
const (
	useUp = 1 << iota
	useDown
)

// place gives every item its x: each layer in turn, each item as near as
// it may be to the median x of its neighbours above and below, sweeping
// down then up.
func (p *plan) place(passes int) {
	for l := range p.layers {
		p.placeLayer(l, 0) // packed, centred on 0
	}
	for range passes {
		for l := 1; l < len(p.layers); l++ {
			p.placeLayer(l, useUp|useDown)
		}
		for l := len(p.layers) - 2; l >= 0; l-- {
			p.placeLayer(l, useUp|useDown)
		}
	}
}

// placeLayer sets the x of layer l's items to the closest fit (least
// squares) of their targets that keeps the order and separations: with
// y[i] = x[i] - the separations before i, the constraint is y
// non-decreasing, an isotonic regression solved by pooling adjacent
// violators in one pass.
func (p *plan) placeLayer(l int, use int) {
	ids := p.layers[l]
	if len(ids) == 0 {
		return
	}
	type block struct {
		sum   float64
		count int
	}
	blocks := make([]block, 0, len(ids))
	offset := 0.0
	offsets := make([]float64, len(ids))
	for i, id := range ids {
		if i > 0 {
			offset += p.sep(ids[i-1], id)
		}
		offsets[i] = offset
		target := p.target(id, use)
		blocks = append(blocks, block{target - offset, 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/float64(a.count) <= b.sum/float64(b.count) {
				break
			}
			blocks = blocks[:len(blocks)-1]
			blocks[len(blocks)-1] = block{a.sum + b.sum, a.count + b.count}
		}
	}
	i := 0
	for _, b := range blocks {
		y := math.Round(b.sum/float64(b.count)/grid) * grid
		for range b.count {
			p.items[ids[i]].x = y + offsets[i]
			i++
		}
	}
}

// target is the median x of an item's neighbours in use, or its own x
// without any (0 at first, which packs the layer from 0). The median,
// unlike the mean, lets a box stay straight under a parent it shares
// with a neighbour instead of drifting towards it layer after layer.
func (p *plan) target(id int32, use int) float64 {
	it := &p.items[id]
	xs := p.scratch[:0]
	if use&useUp != 0 {
		for _, o := range it.up {
			xs = append(xs, p.items[o].x)
		}
	}
	if use&useDown != 0 {
		for _, o := range it.down {
			xs = append(xs, p.items[o].x)
		}
	}
	p.scratch = xs
	switch n := len(xs); {
	case n == 0:
		return it.x
	case n%2 == 1:
		slices.Sort(xs)
		return xs[n/2]
	default:
		// Any x between the middle two is as near (in sum of distances);
		// take the one nearest where the item is, so it moves no more
		// than it must.
		slices.Sort(xs)
		return min(max(it.x, xs[n/2-1]), xs[n/2])
	}
}

// layerTop is the y of the top of layer l's boxes.
func layerTop(l int32) float64 {
	return margin + float64(l)*(BoxHeight+layerGap)
}

// Ports: where links meet a box's bottom (leaving) and top (arriving)
// edge. The links of one side are spread along it, ordered by where their
// other end is, so they neither cross at the box nor share an arrowhead.
const (
	portGap   = 12.0 // between neighbour ports, at most
	portInset = 16.0 // from the box's corners, at least
)

// ports answers, per route, the x offsets from its boxes' centres where
// it leaves its source and arrives at its target.
func (p *plan) ports() (out, in []float64) {
	out = make([]float64, len(p.routes))
	in = make([]float64, len(p.routes))
	leaving := make([][]int32, len(p.items))
	arriving := make([][]int32, len(p.items))
	for i := range p.routes {
		r := &p.routes[i]
		leaving[r.from] = append(leaving[r.from], int32(i))
		arriving[r.to] = append(arriving[r.to], int32(i))
	}
	spread := func(routes []int32, offsets []float64, other func(r *route) int32) {
		if len(routes) < 2 {
			return
		}
		slices.SortStableFunc(routes, func(a, b int32) int {
			return cmp.Compare(p.items[other(&p.routes[a])].x, p.items[other(&p.routes[b])].x)
		})
		k := float64(len(routes) - 1)
		gap := min(portGap, (BoxWidth-2*portInset)/k)
		for i, r := range routes {
			offsets[r] = (float64(i) - k/2) * gap
		}
	}
	for b := range leaving {
		spread(leaving[b], out, func(r *route) int32 { return r.items[1] })
		spread(arriving[b], in, func(r *route) int32 { return r.items[len(r.items)-2] })
	}
	return out, in
}

// path draws a route as cubic Bézier segments: a curve from the bottom of
// one slot to the top of the next, leaving and arriving vertically, and a
// straight run down through each dummy's layer, between the boxes there.
// out and in are its port offsets.
func (p *plan) path(r *route, shift, out, in float64) []Point {
	first := &p.items[r.items[0]]
	at := Point{first.x + shift + out, layerTop(first.layer) + BoxHeight}
	pts := make([]Point, 1, 1+6*(len(r.items)-1))
	pts[0] = at
	last := len(r.items) - 1
	for i, id := range r.items[1:] {
		it := &p.items[id]
		to := Point{it.x + shift, layerTop(it.layer)}
		if i+1 == last {
			to.X += in
		}
		bend := layerGap / 2
		pts = append(pts, Point{at.X, at.Y + bend}, Point{to.X, to.Y - bend}, to)
		at = to
		if it.box < 0 {
			down := Point{to.X, to.Y + BoxHeight}
			pts = append(pts, to, down, down)
			at = down
		}
	}
	return pts
}
