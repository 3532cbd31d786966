package dag

import (
	"errors"
	"fmt"
	"math"
)

// Node is one task of the graph.
type Node struct {
	ID     string // the task name, unique in the graph
	Label  string // the text shown in the box; ID when empty
	Detail string // a second, smaller line (attempts, duration...)
	State  string // a task status: "pending", "running", "succeeded"...
}

// Edge is one dependency: To runs after From under Condition.
type Edge struct {
	From, To  string
	Condition string // "success" | "completion" | "failure"; "success" when empty
}

// Graph is what Layout draws.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Options tune Layout; the zero value is the default.
type Options struct {
	// MaxLayerWidth is the number of tasks past which a layer's siblings
	// are grouped; 0 means DefaultMaxLayerWidth.
	MaxLayerWidth int
}

// Limits; the package documentation says what happens past each.
const (
	// DefaultMaxLayerWidth is the layer width past which siblings are
	// grouped.
	DefaultMaxLayerWidth = 12
	// MaxChainLength is the chain length past which a chain's middle is
	// grouped.
	MaxChainLength = 24
	// MaxBoxes is the most boxes (tasks and groups) a diagram holds.
	MaxBoxes = 2000
	// MaxSegments is the most link segments (a link crossing k layers has
	// k) a diagram holds.
	MaxSegments = 20000
)

var (
	// ErrInvalidGraph: a node without an ID, a duplicate node or edge, an
	// edge to an unknown node or with an unknown condition, or a cycle.
	ErrInvalidGraph = errors.New("dag: invalid graph")
	// ErrInvalidOptions: a negative MaxLayerWidth.
	ErrInvalidOptions = errors.New("dag: invalid options")
	// ErrTooLarge: more than MaxBoxes boxes or MaxSegments link segments
	// after grouping; the caller shows a notice instead of a drawing.
	ErrTooLarge = errors.New("dag: graph too large to draw")
)

// Point is a position in the diagram, y growing downwards.
type Point struct{ X, Y float64 }

// Box is one task drawn.
type Box struct {
	Node
	Layer, Pos int     // layer from the roots, position among the layer's boxes (tasks and groups)
	X, Y, W, H float64 // top-left corner and size
}

// StateCount is how many members of a group are in one state.
type StateCount struct {
	State string
	Count int
}

// Group is a set of tasks drawn as one box: siblings of a wide layer, or
// the middle of a long chain.
type Group struct {
	ID         string       // "group:" + the first member's ID (+ "+"s if a task has that name)
	Label      string       // what the box says the group is
	Chain      bool         // the middle of a chain, not siblings
	Members    []string     // member IDs: along the chain, else in the graph's order
	State      string       // the worst member state (see StateRank)
	Counts     []StateCount // per state, worst first
	Layer, Pos int          // as for a Box
	X, Y, W, H float64
}

// Link is one edge drawn between two boxes, each named by a task's ID or
// a group's ID. Edges between the same boxes under the same condition
// are drawn once.
type Link struct {
	From, To  string
	Condition string
	// Points is a path of cubic Bézier segments: the start, then three
	// points (two controls and the end) per segment.
	Points []Point
}

// Diagram is a laid-out graph, in SVG user units.
type Diagram struct {
	Width, Height float64
	Boxes         []Box
	Groups        []Group
	Links         []Link
}

// Layout places g's nodes in layers, groups what is too wide or too
// long to draw box by box, orders each layer to cut crossings and routes
// the edges; see the package documentation for the algorithm and limits.
// It fails with ErrInvalidGraph on a bad graph, ErrInvalidOptions on bad
// options and ErrTooLarge past the limits. The same graph and options
// always give the same diagram.
func Layout(g *Graph, opt Options) (*Diagram, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: nil graph", ErrInvalidGraph)
	}
	if opt.MaxLayerWidth < 0 {
		return nil, fmt.Errorf("%w: MaxLayerWidth %d is negative", ErrInvalidOptions, opt.MaxLayerWidth)
	}
	maxWidth := opt.MaxLayerWidth
	if maxWidth == 0 {
		maxWidth = DefaultMaxLayerWidth
	}
	names, a, err := index(g)
	if err != nil {
		return nil, err
	}
	layer, layers, cyclic, err := longestPath(a)
	if err != nil {
		return nil, fmt.Errorf("%w: a cycle reaches node %q", err, g.Nodes[cyclic].ID)
	}
	boxes, boxOf := siblingBoxes(a, layer, layers, maxWidth)
	links := boxLinks(a, boxes, boxOf)
	boxes, newIndex := collapseChains(boxes, links, MaxChainLength)
	for v, b := range boxOf {
		boxOf[v] = newIndex[b]
	}
	if len(boxes) > MaxBoxes {
		return nil, errTooLarge("%d boxes after grouping, more than %d", len(boxes), MaxBoxes)
	}
	links = boxLinks(a, boxes, boxOf)
	layer, layers, _, err = longestPath(links)
	if err != nil {
		// Grouping merges tasks of one layer, or a chain: it keeps the
		// graph acyclic, so this is a bug.
		return nil, fmt.Errorf("dag: grouping made a cycle: %w", err)
	}
	p, err := newPlan(links, layer, layers, MaxSegments)
	if err != nil {
		return nil, err
	}
	p.order(orderPasses)
	p.place(placePasses)
	return p.diagram(g, boxes, names), nil
}

// Passes of the sweeps: a few are enough for the crossings and positions
// to settle on workflow graphs; each costs one walk of every segment.
const (
	orderPasses = 4
	placePasses = 4
)

func errTooLarge(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrTooLarge}, args...)...)
}

// diagram turns the placed plan into boxes, groups and links, each list
// in reading order (layer by layer, left to right).
func (p *plan) diagram(g *Graph, boxes []box, names map[string]int32) *Diagram {
	left := math.Inf(1)
	right := math.Inf(-1)
	for id := range p.items {
		h := p.halfWidth(int32(id))
		left = min(left, p.items[id].x-h)
		right = max(right, p.items[id].x+h)
	}
	d := &Diagram{Width: 2 * margin, Height: 2 * margin}
	if len(p.items) == 0 {
		return d
	}
	shift := margin - left
	d.Width = right - left + 2*margin
	d.Height = layerTop(int32(len(p.layers))) - layerGap + margin
	ids := make([]string, len(boxes))
	for _, layerIDs := range p.layers {
		pos := -1 // among the layer's boxes, link slots left out
		for _, id := range layerIDs {
			it := &p.items[id]
			if it.box < 0 {
				continue
			}
			pos++
			b := &boxes[it.box]
			x, y := it.x+shift-BoxWidth/2, layerTop(it.layer)
			if !b.group {
				n := g.Nodes[b.members[0]]
				if n.Label == "" {
					n.Label = n.ID
				}
				ids[it.box] = n.ID
				d.Boxes = append(d.Boxes, Box{Node: n, Layer: int(it.layer), Pos: pos, X: x, Y: y, W: BoxWidth, H: BoxHeight})
				continue
			}
			gr := newGroup(g, b)
			// A link names its ends by ID: a group's must not be a
			// task's name too (a task may be called "group:x"), nor
			// another group's.
			for _, taken := names[gr.ID]; taken; _, taken = names[gr.ID] {
				gr.ID += "+"
			}
			names[gr.ID] = -1
			gr.Layer, gr.Pos, gr.X, gr.Y, gr.W, gr.H = int(it.layer), pos, x, y, BoxWidth, BoxHeight
			ids[it.box] = gr.ID
			d.Groups = append(d.Groups, gr)
		}
	}
	d.Links = make([]Link, len(p.routes))
	out, in := p.ports()
	for i := range p.routes {
		r := &p.routes[i]
		d.Links[i] = Link{From: ids[r.from], To: ids[r.to], Condition: condNames[r.cond], Points: p.path(r, shift, out[i], in[i])}
	}
	return d
}
