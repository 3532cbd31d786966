// Package dag lays out a workflow's task graph in layers and writes it as
// SVG for the inspector's run page.
//
// # Algorithm
//
// [Layout] works in six steps, each deterministic (the same graph and
// options always give the same diagram, byte for byte once written):
//
//  1. Layers: a task without parents is in layer 0, any other task one
//     layer below its deepest parent (longest path from the roots), so
//     every edge points down.
//  2. Siblings: in a layer of more than MaxLayerWidth tasks (default 12),
//     tasks with the same parents and the same children, under the same
//     condition on each edge, are collapsed into one group box; a parent
//     or child that is itself collapsed counts as its group, so a fan-out
//     of parallel pipelines (a → b_i → c_i → d) becomes one group per
//     stage. This is the coarsest such partition, found by refinement.
//     Every such class of two or more tasks is collapsed; tasks in layers
//     of at most MaxLayerWidth tasks are never grouped.
//  3. Chains: a chain is a path of boxes where each link is the only one
//     leaving its source and the only one entering its target. In a chain
//     of more than 24 boxes ([MaxChainLength]), the first and last box
//     stay and the middle becomes one group box. Layers are then computed
//     again over the boxes.
//  4. Order: a long link (one that skips layers) gets a narrow slot in
//     every layer it crosses. Layers are ordered by barycentre sweeps,
//     down (each box by the mean position of its parents) then up (of its
//     children), four times; after each down-and-up pass, neighbours in a
//     layer are swapped while a swap cuts crossings (transposition, up to
//     500,000 link-pair comparisons per layout). The order with the
//     fewest crossings counted is kept.
//  5. Coordinates: all boxes are 160×48 on an 8-unit grid, layers 64
//     apart. Each layer starts packed and centred; then, sweeping down
//     and up four times, each box and slot aims at the median x of its
//     neighbours in the layers above and below (between the middle two,
//     it stays where it is, so boxes sharing parents stay straight
//     instead of drifting), and the layer takes the x's closest to those
//     aims (in least squares) that keep its order and spacing: an
//     isotonic regression, one linear pass per layer.
//  6. Edges: each link is a cubic curve from the bottom edge of its
//     source to the top edge of its target, leaving and arriving
//     vertically; the links of one side of a box are spread along it (12
//     apart at most, clear of the corners) in the order of their other
//     ends, so none share an arrowhead. A long link runs straight down
//     through its slot in each layer it crosses, between the boxes there,
//     so it never crosses a box. Edges between the same two boxes under
//     the same condition are drawn once.
//
// A group shows its worst member's state (dead, failed, retrying,
// cancelled, running, ready, pending, skipped, succeeded, in that order)
// and its counts per state, worst first. Its label is the members' common
// name prefix and count ("shard-* ×500"), else "N tasks", or "chain of N
// tasks"; its title names the first and last member.
//
// # Limits
//
// After grouping, a diagram holds at most 2,000 boxes ([MaxBoxes]) and
// 20,000 link segments ([MaxSegments]; a link crossing k layers counts
// k). Past either, Layout fails with [ErrTooLarge] and the page shows a
// notice instead of a drawing. Time is about linear in tasks plus edges,
// with a log factor from sorting, times the few sweeps over what is drawn:
// a 10,000-task fan-out or chain (grouped into three boxes) is laid out
// and written in 2.5 to 6 ms on one core of a busy 2-core machine; the
// worst case, 2,000 tasks drawn box by box with close to 20,000 link
// segments, in 30 to 60 ms, its 2 MB of SVG included (BenchmarkLayout*).
// Sibling refinement takes one pass per layer a difference climbs: 100
// parallel chains of 100 tasks, one with an extra child at its end, take
// 100 passes, about 45 ms (BenchmarkLayoutCascade10k).
//
// # SVG
//
// [Diagram.WriteSVG] writes one <svg class="dag"> with a viewBox. Each
// task is a <g class="task state-STATUS" data-task="NAME">, each group a
// <g class="group state-STATUS" data-group="ID" data-count="N"> (ID is
// "group:" and its first member's name, with "+" added while that names
// another box; its text gives the counts per state), each edge a <path
// class="edge cond-CONDITION" data-from="A" data-to="B"> where A and B
// name a task or a group. Colours are inline fallbacks a page's
// stylesheet overrides through those classes. Every name is escaped; a
// state that is not a plain lower-case word is written "unknown". A
// task's title holds its name and detail but not its state, which a page
// may change live through the class.
package dag
