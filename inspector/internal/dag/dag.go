package dag

import (
	"errors"
	"io"
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
	// MaxLayerWidth is the number of boxes past which a layer's siblings
	// are grouped; 0 means DefaultMaxLayerWidth.
	MaxLayerWidth int
}

// DefaultMaxLayerWidth is the layer width past which siblings are grouped.
const DefaultMaxLayerWidth = 12

// ErrTooLarge: the graph still has more than MaxBoxes boxes after grouping.
var ErrTooLarge = errors.New("dag: graph too large to draw")

// ErrInvalidGraph: a node without an ID, a duplicate ID, an edge to an
// unknown node, or a cycle.
var ErrInvalidGraph = errors.New("dag: invalid graph")

// MaxBoxes is the most boxes (tasks and groups) a diagram holds.
const MaxBoxes = 2000

// Point is a position in the diagram, y growing downwards.
type Point struct{ X, Y float64 }

// Box is one task drawn.
type Box struct {
	Node
	Layer, Pos int     // layer from the roots, position within the layer
	X, Y, W, H float64 // top-left corner and size
}

// StateCount is how many members of a group are in one state.
type StateCount struct {
	State string
	Count int
}

// Group is a set of siblings drawn as one box.
type Group struct {
	ID         string       // stable: "group:" + the first member's ID
	Members    []string     // member IDs, sorted
	State      string       // the worst member state
	Counts     []StateCount // per state, worst first
	Layer, Pos int
	X, Y, W, H float64
}

// Link is one edge drawn between two boxes (a task's ID or a group's ID).
type Link struct {
	From, To  string
	Condition string
	Points    []Point // a cubic Bézier path: start, then three points per segment
}

// Diagram is a laid-out graph.
type Diagram struct {
	Width, Height float64
	Boxes         []Box
	Groups        []Group
	Links         []Link
}

// Layout places g's nodes in layers and routes its edges.
func Layout(g *Graph, opt Options) (*Diagram, error) {
	return &Diagram{}, nil
}

// WriteSVG writes d as one standalone SVG element.
func (d *Diagram) WriteSVG(w io.Writer) error {
	_, err := io.WriteString(w, `<svg class="dag" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 0 0"></svg>`)
	return err
}
