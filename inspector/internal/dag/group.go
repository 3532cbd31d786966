package dag

import (
	"encoding/binary"
	"slices"
)

// box is one thing drawn in a layer: a task, or a group of tasks.
type box struct {
	members []int32 // node indexes, in input order
	group   bool    // drawn as a group, even with one member left
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
			ends = appendEnds(ends[:0], a.parents[v], cls)
			key = appendList(key, ends)
			ends = appendEnds(ends[:0], a.children[v], cls)
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
	boxOf := make([]int32, n)
	var boxes []box
	first := make(map[int32]int32)
	size := make(map[int32]int)
	for v := range n {
		if cand[v] {
			size[cls[v]]++
		}
	}
	for v := range n {
		if !cand[v] || size[cls[v]] == 1 {
			boxOf[v] = int32(len(boxes))
			boxes = append(boxes, box{members: []int32{int32(v)}})
			continue
		}
		b, ok := first[cls[v]]
		if !ok {
			b = int32(len(boxes))
			first[cls[v]] = b
			boxes = append(boxes, box{group: true})
		}
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
// condition, in the order of the edges that make them.
func boxLinks(a *adjGraph, boxOf []int32, nboxes int) *adjGraph {
	type link struct {
		from, to int32
		cond     uint8
	}
	links := newAdjGraph(nboxes)
	seen := make(map[link]struct{})
	for v, children := range a.children {
		for _, c := range children {
			l := link{boxOf[v], boxOf[c.to], c.cond}
			if l.from == l.to {
				continue // inside a collapsed chain
			}
			if _, dup := seen[l]; dup {
				continue
			}
			seen[l] = struct{}{}
			links.add(l.from, l.to, l.cond)
		}
	}
	return links
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
		p := links.parents[b]
		return len(p) == 1 && len(links.children[p[0].to]) == 1
	}
	path := make([]int32, 0, 64)
	for b := range n {
		if inChain(b) || len(links.children[b]) != 1 {
			continue // not the start of a chain
		}
		path = append(path[:0], int32(b))
		for cur := b; len(links.children[cur]) == 1; {
			c := int(links.children[cur][0].to)
			if len(links.parents[c]) != 1 {
				break
			}
			path = append(path, int32(c))
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
