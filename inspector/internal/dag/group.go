package dag

import (
	"encoding/binary"
	"slices"
)

// box is one thing drawn in a layer: a task, or a group of tasks.
type box struct {
	members []int32 // node indexes: in input order, along the path for a chain
	group   bool    // drawn as a group (of two members or more)
	chain   bool    // a group made of a chain's middle
}

// siblingBoxes groups the siblings of every layer wider than maxWidth and
// answers each node's box. Two tasks of such a layer are siblings when
// they have the same parents and the same children under the same
// conditions, where a parent or child that is itself grouped counts as its
// group: the coarsest such partition, found by refinement.
func siblingBoxes(a *adjGraph, layer []int32, layers, maxWidth int) ([]box, []int32) {
	n := len(layer)
	width := make([]int, layers)
	for _, l := range layer {
		width[l]++
	}
	// Tasks outside wide layers keep classes 0..fixed-1 of their own; the
	// tasks of one wide layer start in one class and are split apart.
	cls := make([]int32, n)
	cand := make([]bool, n)
	fixed := int32(0)
	for v, l := range layer {
		if width[l] <= maxWidth {
			cls[v] = fixed
			fixed++
		} else {
			cand[v] = true
		}
	}
	classes := 0
	if int(fixed) < n {
		start := make(map[int32]int32)
		for v, l := range layer {
			if !cand[v] {
				continue
			}
			c, ok := start[l]
			if !ok {
				c = fixed + int32(len(start))
				start[l] = c
			}
			cls[v] = c
		}
		classes = len(start)
	}
	var key []byte
	var ends []uint64
	next := make([]int32, n)
	for classes > 0 {
		ids := make(map[string]int32, classes)
		for v := range n {
			if !cand[v] {
				next[v] = cls[v]
				continue
			}
			key = binary.AppendUvarint(key[:0], uint64(cls[v]))
			ends = appendEnds(ends[:0], a.parents(int32(v)), cls)
			key = appendList(key, ends)
			ends = appendEnds(ends[:0], a.children(int32(v)), cls)
			key = appendList(key, ends)
			c, ok := ids[string(key)]
			if !ok {
				c = fixed + int32(len(ids))
				ids[string(key)] = c
			}
			next[v] = c
		}
		cls, next = next, cls
		// Refinement only splits classes (a key holds the old class), so
		// the same count means the same partition: it is stable.
		if len(ids) == classes {
			break
		}
		classes = len(ids)
	}
	// Class ids are below n; a class's box is its index + 1, 0 for none.
	boxOf := make([]int32, n)
	boxes := make([]box, 0, n)
	size := make([]int32, n)
	first := make([]int32, n)
	for v := range n {
		if cand[v] {
			size[cls[v]]++
		}
	}
	// A lone task's members slice is a one-element window on self, capped
	// so an append (a chain's merge) copies instead of writing over the
	// next.
	self := make([]int32, n)
	for v := range n {
		if !cand[v] || size[cls[v]] == 1 {
			self[v] = int32(v)
			boxOf[v] = int32(len(boxes))
			boxes = append(boxes, box{members: self[v : v+1 : v+1]})
			continue
		}
		if first[cls[v]] == 0 {
			first[cls[v]] = int32(len(boxes)) + 1
			boxes = append(boxes, box{group: true, members: make([]int32, 0, size[cls[v]])})
		}
		b := first[cls[v]] - 1
		boxes[b].members = append(boxes[b].members, int32(v))
		boxOf[v] = b
	}
	return boxes, boxOf
}

// appendEnds appends the classes and conditions at the ends of list,
// sorted and without repeats.
func appendEnds(ends []uint64, list []adj, cls []int32) []uint64 {
	for _, e := range list {
		ends = append(ends, uint64(cls[e.to])<<2|uint64(e.cond))
	}
	slices.Sort(ends)
	return slices.Compact(ends)
}

func appendList(key []byte, list []uint64) []byte {
	key = binary.AppendUvarint(key, uint64(len(list)))
	for _, x := range list {
		key = binary.AppendUvarint(key, x)
	}
	return key
}

// boxLinks answers the links between boxes, one per box pair and
// condition, ordered by source box, then by member and edge order.
func boxLinks(a *adjGraph, boxes []box, boxOf []int32) *adjGraph {
	var links []edgeRec
	// stamp[to*3+cond] is the source box + 1 that last linked there.
	stamp := make([]int32, 3*len(boxes))
	for b := range boxes {
		from := int32(b)
		for _, v := range boxes[b].members {
			for _, c := range a.children(v) {
				to := boxOf[c.to]
				k := int(to)*3 + int(c.cond)
				if to == from || stamp[k] == from+1 {
					continue // inside a collapsed chain, or drawn already
				}
				stamp[k] = from + 1
				links = append(links, edgeRec{from, to, c.cond})
			}
		}
	}
	return buildAdj(len(boxes), links)
}

// collapseChains replaces the middle of every chain of more than maxLen
// boxes by one group, keeping the chain's first and last box. A chain is
// a path of boxes where each link is the only one leaving its source and
// the only one entering its target. It answers the boxes left, in their
// order, and each old box's new index.
func collapseChains(boxes []box, links *adjGraph, maxLen int) ([]box, []int32) {
	n := len(boxes)
	into := make([]int32, n) // the box each box is merged into
	for b := range into {
		into[b] = int32(b)
	}
	inChain := func(b int) bool {
		p := links.parents(int32(b))
		return len(p) == 1 && len(links.children(p[0].to)) == 1
	}
	path := make([]int32, 0, 64)
	for b := range n {
		if inChain(b) || len(links.children(int32(b))) != 1 {
			continue // not the start of a chain
		}
		path = append(path[:0], int32(b))
		for cur := int32(b); len(links.children(cur)) == 1; {
			c := links.children(cur)[0].to
			if len(links.parents(c)) != 1 {
				break
			}
			path = append(path, c)
			cur = c
		}
		if len(path) <= maxLen {
			continue
		}
		mid := path[1]
		boxes[mid].group, boxes[mid].chain = true, true
		for _, m := range path[2 : len(path)-1] {
			boxes[mid].members = append(boxes[mid].members, boxes[m].members...)
			boxes[m].members = nil
			into[m] = mid
		}
	}
	kept := make([]box, 0, n)
	newIndex := make([]int32, n)
	for b := range n {
		if into[b] == int32(b) {
			newIndex[b] = int32(len(kept))
			kept = append(kept, boxes[b])
		}
	}
	for b := range n {
		newIndex[b] = newIndex[into[b]]
	}
	return kept, newIndex
}
