package dag

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// element is one parsed SVG element with its attributes and direct text.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG reads out strictly as XML and answers its elements in order;
// the test fails if it is not well-formed.
func parseSVG(t *testing.T, out []byte) []element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.Strict = true
	var els []element
	var open []int
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			open = append(open, len(els))
			els = append(els, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				els[open[len(open)-1]].text += string(tok)
			}
		}
	}
	return els
}

func writeSVG(t *testing.T, g *Graph, opt Options) ([]byte, []element) {
	t.Helper()
	var buf bytes.Buffer
	if err := mustLayout(t, g, opt).WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), parseSVG(t, buf.Bytes())
}

func TestSVGContract(t *testing.T) {
	t.Parallel()
	g := fanOut(20)
	g.Nodes[0].Detail = "1.2s"
	g.Edges[0].Condition = "completion" // root -> shard 0 differs: stays a task
	d := mustLayout(t, g, Options{})
	var buf bytes.Buffer
	if err := d.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, buf.Bytes())
	root := els[0]
	if root.name != "svg" || root.attrs["class"] != "dag" || root.attrs["viewBox"] != fmt.Sprintf("0 0 %v %v", d.Width, d.Height) {
		t.Fatalf("root %+v", root)
	}
	tasks, groups, edges := map[string]string{}, map[string]element{}, map[string]string{}
	for i, e := range els {
		switch {
		case e.name == "g" && e.attrs["data-task"] != "":
			tasks[e.attrs["data-task"]] = e.attrs["class"]
			if els[i+1].name != "title" || els[i+2].name != "rect" || els[i+3].name != "text" {
				t.Errorf("task %s holds %s, %s, %s", e.attrs["data-task"], els[i+1].name, els[i+2].name, els[i+3].name)
			}
		case e.name == "g" && e.attrs["data-group"] != "":
			e.text = els[i+1].text + "|" + els[i+5].text // title | counts line
			groups[e.attrs["data-group"]] = e
		case e.name == "path" && strings.HasPrefix(e.attrs["class"], "edge "):
			edges[e.attrs["data-from"]+">"+e.attrs["data-to"]] = e.attrs["class"]
			if !strings.HasPrefix(e.attrs["d"], "M") || !strings.Contains(e.attrs["d"], "C") {
				t.Errorf("edge path %q", e.attrs["d"])
			}
		}
	}
	wantTasks := map[string]string{"root": "task state-succeeded", "join": "task state-unknown", "shard-00000": "task state-succeeded"}
	if fmt.Sprint(tasks) != fmt.Sprint(wantTasks) {
		t.Errorf("tasks %v, want %v", tasks, wantTasks)
	}
	gr, ok := groups["group:shard-00001"]
	if !ok || len(groups) != 1 {
		t.Fatalf("groups %v", groups)
	}
	// 19 shards: 1..19 cycle running, pending, succeeded.
	if gr.attrs["class"] != "group state-running" || gr.attrs["data-count"] != "19" ||
		gr.text != "shard-000* ×19\nshard-00001 … shard-00019\n7 running, 6 pending, 6 succeeded|7 running, 6 pending" {
		t.Errorf("group %+v", gr)
	}
	wantEdges := map[string]string{
		"root>shard-00000":       "edge cond-completion",
		"root>group:shard-00001": "edge cond-success",
		"shard-00000>join":       "edge cond-success",
		"group:shard-00001>join": "edge cond-success",
	}
	if fmt.Sprint(edges) != fmt.Sprint(wantEdges) {
		t.Errorf("edges %v, want %v", edges, wantEdges)
	}
	// Fallback colours are inline, so the SVG reads alone.
	if !strings.Contains(buf.String(), `fill="#bbdefb" stroke="#1565c0"`) {
		t.Error("no inline fill for the running group")
	}
}

func TestSVGEscapesNames(t *testing.T) {
	t.Parallel()
	hostile := `<script>alert("x")</script>&'`
	g := &Graph{
		Nodes: []Node{
			{ID: hostile, Label: hostile, Detail: "</text><script>", State: `running" onload="x`},
			{ID: "b\x00c\xffd\ne", State: "ready"},
		},
		Edges: []Edge{{From: hostile, To: "b\x00c\xffd\ne"}},
	}
	out, els := writeSVG(t, g, Options{})
	if bytes.Contains(out, []byte("<script")) || bytes.Contains(out, []byte(`" onload`)) {
		t.Fatalf("unescaped name in\n%s", out)
	}
	var got []string
	for _, e := range els {
		if v, ok := e.attrs["data-task"]; ok {
			got = append(got, v+" "+e.attrs["class"])
		}
		if e.name == "path" && e.attrs["data-from"] != "" {
			got = append(got, e.attrs["data-from"]+" -> "+e.attrs["data-to"])
		}
		if e.name == "text" {
			got = append(got, "text "+e.text)
		}
	}
	want := []string{
		hostile + " -> b\uFFFDc\uFFFDd\ne",
		hostile + " task state-unknown",
		`text <script>alert("x")</s…`,
		"text </text><script>",
		"b\uFFFDc\uFFFDd\ne task state-ready",
		"text b\uFFFDc\uFFFDd\ne",
	}
	if strings.Join(got, "\n|") != strings.Join(want, "\n|") {
		t.Fatalf("parsed back\n%q\nwant\n%q", got, want)
	}
}

func TestSVGEmptyDiagram(t *testing.T) {
	t.Parallel()
	_, els := writeSVG(t, &Graph{}, Options{})
	if els[0].attrs["viewBox"] != "0 0 32 32" {
		t.Fatalf("viewBox %q", els[0].attrs["viewBox"])
	}
}

type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestSVGWriteError(t *testing.T) {
	t.Parallel()
	if err := mustLayout(t, fanOut(3000), Options{}).WriteSVG(failingWriter{}); !errors.Is(err, errWrite) {
		t.Fatalf("error %v, want %v", err, errWrite)
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"short":                        "short",
		strings.Repeat("x", 22):        strings.Repeat("x", 22),
		strings.Repeat("é", 23):        strings.Repeat("é", 21) + "…",
		"a-very-long-task-name-indeed": "a-very-long-task-name…",
	} {
		if got := cut(in, labelRunes); got != want {
			t.Errorf("cut(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNum(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{0: "0", 16: "16", -8: "-8", 2.5: "2.5", 1e20: "100000000000000000000"} {
		var buf bytes.Buffer
		s := svgWriter{bufio.NewWriter(&buf), new([]byte)}
		s.num(v)
		_ = s.Flush()
		if buf.String() != want {
			t.Errorf("num(%v) = %q, want %q", v, buf.String(), want)
		}
	}
}

func TestSVGPaths(t *testing.T) {
	t.Parallel()
	// a -> c skips b's layer: it curves into its slot, runs straight down
	// through it, then curves into c; straight stretches are written as
	// vertical lines.
	_, els := writeSVG(t, graphOf([]string{"a>b", "b>c", "a>c"}), Options{})
	paths := map[string]string{}
	for _, e := range els {
		if e.name == "path" && e.attrs["data-from"] != "" {
			paths[e.attrs["data-from"]+">"+e.attrs["data-to"]] = e.attrs["d"]
		}
	}
	want := map[string]string{
		"a>b": "M138 64C138 96 96 96 96 128",
		"b>c": "M96 176C96 208 138 208 138 240",
		"a>c": "M150 64C150 96 192 96 192 128V176C192 208 150 208 150 240",
	}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Fatalf("paths\n%v\nwant\n%v", paths, want)
	}
}
