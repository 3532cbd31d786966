// Package dag lays out a workflow's task graph in layers and writes it as
// SVG for the inspector's run page.
package dag
