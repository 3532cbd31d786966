package dag_test

import (
	"fmt"

	"github.com/plaitdag/plait/inspector/internal/dag"
)

func ExampleLayout() {
	g := &dag.Graph{
		Nodes: []dag.Node{
			{ID: "extract", State: "succeeded"},
			{ID: "transform", State: "running", Detail: "attempt 2"},
			{ID: "alert", State: "pending"},
			{ID: "load", State: "pending"},
		},
		Edges: []dag.Edge{
			{From: "extract", To: "transform"},
			{From: "extract", To: "alert", Condition: "failure"},
			{From: "transform", To: "load"},
			{From: "extract", To: "load", Condition: "completion"},
		},
	}
	d, err := dag.Layout(g, dag.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// d.WriteSVG(w) writes the diagram as one <svg class="dag">.
	fmt.Printf("%vx%v\n", d.Width, d.Height)
	for _, b := range d.Boxes {
		fmt.Printf("%s: layer %d at (%v,%v)\n", b.ID, b.Layer, b.X, b.Y)
	}
	for _, l := range d.Links {
		fmt.Printf("%s -> %s (%s) %v\n", l.From, l.To, l.Condition, l.Points)
	}
	// Output:
	// 392x304
	// extract: layer 0 at (200,16)
	// transform: layer 1 at (16,128)
	// alert: layer 1 at (200,128)
	// load: layer 2 at (128,240)
	// extract -> transform (success) [{268 64} {268 96} {96 96} {96 128}]
	// extract -> alert (failure) [{280 64} {280 96} {280 96} {280 128}]
	// extract -> load (completion) [{292 64} {292 96} {376 96} {376 128} {376 128} {376 176} {376 176} {376 208} {214 208} {214 240}]
	// transform -> load (success) [{96 176} {96 208} {202 208} {202 240}]
}
