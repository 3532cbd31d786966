package memstore

import "slices"

// A Go map keeps the room of its largest size after its entries are
// deleted, and a slice drained from the front or filtered in place keeps
// its whole array: a store that once held many runs at a time would keep
// that room for good, about 35 bytes for each run of its peak in the map
// of runs alone. The structures that lose entries as runs go are rebuilt
// at their size once they use a quarter of their room or less; a rebuild
// copies what is left, at most a third of what was deleted since the last
// one, so it costs each delete O(1) amortized.

// shrinkMin is the fewest entries a map must have held, or a slice must
// have room for, before it is rebuilt: below it the room is not worth a
// copy.
const shrinkMin = 64

// shrunk returns m, just deleted from, or a copy of m sized to its entries
// once it holds a quarter of its peak or less. peak is the most entries m
// held since it was built, kept by shrunk itself: a map only grows between
// two deletes, so it held len(m)+1 entries just before this one.
func shrunk[K comparable, V any](m map[K]V, peak *int) map[K]V {
	if n := len(m) + 1; n > *peak {
		*peak = n
	}
	if *peak < shrinkMin || len(m) > *peak/4 {
		return m
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	*peak = len(m)
	return out
}

// fitted returns q, or a copy of q in an array of its own size once q
// uses a quarter of its room or less; nil when q is empty.
func fitted[T any](q []T) []T {
	if len(q) == 0 {
		return nil
	}
	if cap(q) < shrinkMin || len(q) > cap(q)/4 {
		return q
	}
	return slices.Clone(q)
}

// dropFront returns q without its first n entries, cleared so that they
// hold nothing, fitted.
func dropFront[T any](q []T, n int) []T {
	if n == 0 {
		return q
	}
	clear(q[:n])
	return fitted(q[n:])
}
