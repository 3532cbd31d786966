package plait_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The tests in this file keep the README and docs/ true to the code and to
// each other: the README lists every capability with a link to its page,
// docs/store-contract.md has a section for every interface of package
// store, docs/options.md a row for every option, and no relative link
// points at a file or heading that is not there.

// readmeCapabilities is what the README's capability list must name, each
// with a link to the page that documents it. A capability is found by the
// words of its bold link, so dropping or renaming one fails the test.
var readmeCapabilities = []struct {
	words []string // all of them, in the link's text, any case
	page  string   // the page it links to, relative to the repository
}{
	{[]string{"schedules"}, "docs/schedules.md"},
	{[]string{"routing", "limits"}, "docs/routing-and-limits.md"},
	{[]string{"records", "queries"}, "docs/records-and-dead-letters.md"},
	{[]string{"dead letters"}, "docs/records-and-dead-letters.md"},
	{[]string{"events", "subscribe"}, "docs/events-and-metrics.md"},
	{[]string{"stats", "metrics"}, "docs/events-and-metrics.md"},
	{[]string{"nodes"}, "docs/nodes.md"},
	{[]string{"built-in tasks", "workflow files"}, "docs/built-in-tasks.md"},
	{[]string{"rendering"}, "docs/rendering.md"},
	{[]string{"middleware"}, "docs/handlers.md"},
}

// capabilityItem is one entry of the README's capability list: a bullet
// that opens with a bold link, "- **[Name](page)**: what it does".
var capabilityItem = regexp.MustCompile(`(?m)^- \*\*\[([^\]]+)\]\(([^)\s]+)\)\*\*`)

func TestDocsReadmeCapabilitiesLinkToTheirPages(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	list := between(t, string(readme), "\n## Capabilities\n", "\n## ", "README.md")
	items := capabilityItem.FindAllStringSubmatch(list, -1)
	require.NotEmpty(t, items, "the README's capability list has no entry of the form - **[Name](page)**")
	require.Equal(t, strings.Count(list, "\n- "), len(items), "every entry of the capability list opens with a bold link to its page")
	for _, it := range items {
		name, target := it[1], it[2]
		page, _, _ := strings.Cut(target, "#")
		require.True(t, strings.HasPrefix(page, "docs/") && strings.HasSuffix(page, ".md"), "capability %q links to %q, not to a page of docs/", name, target)
		_, err := os.Stat(page)
		require.NoError(t, err, "capability %q links to a page that does not exist", name)
	}
	for _, want := range readmeCapabilities {
		found := false
		for _, it := range items {
			name := strings.ToLower(strings.ReplaceAll(it[1], "`", ""))
			page, _, _ := strings.Cut(it[2], "#")
			if containsAll(name, want.words) && page == want.page {
				found = true
				break
			}
		}
		require.True(t, found, "the README's capability list has no entry naming %q that links to %s", want.words, want.page)
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// TestDocsStoreContractCoversEveryInterface reads the interfaces of package
// store from its source and requires a heading of docs/store-contract.md
// naming each: a capability added to the contract needs its section.
func TestDocsStoreContractCoversEveryInterface(t *testing.T) {
	t.Parallel()
	names := storeInterfaces(t)
	require.Contains(t, names, "Store")
	require.Contains(t, names, "Pinger", "the interfaces are read from store/*.go")
	doc, err := os.ReadFile("docs/store-contract.md")
	require.NoError(t, err)
	heads := headings(string(doc))
	for _, name := range names {
		word := regexp.MustCompile(`\b` + name + `\b`)
		found := false
		for _, h := range heads {
			if word.MatchString(h) {
				found = true
				break
			}
		}
		require.True(t, found, "docs/store-contract.md has no heading naming store.%s: add its section", name)
	}
}

// storeInterfaces lists the exported interface types declared in the
// non-test files of package store.
func storeInterfaces(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("store", "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() && ts.Assign == 0 {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	return names
}

// TestDocsListEveryOption keeps the option tables of docs/options.md
// complete: every exported With… function returning an Option, in the root
// package and in each store package, has a row of its table.
func TestDocsListEveryOption(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/options.md")
	require.NoError(t, err)
	for _, pkg := range []struct{ dir, table string }{
		{".", "| scheduler option |"},
		{"store/redisstore", "| redisstore option |"},
		{"store/memstore", "| memstore option |"},
	} {
		// A table ends at the blank line after it, or at the end of the file.
		table := between(t, string(doc)+"\n\n", pkg.table, "\n\n", "docs/options.md")
		names := optionFuncs(t, pkg.dir)
		require.NotEmpty(t, names, "no option found in %s", pkg.dir)
		for _, name := range names {
			require.Contains(t, table, "| `"+name+"(", "the %s table of docs/options.md has no row for %s", strings.Trim(pkg.table, "| "), name)
		}
	}
}

// optionFuncs lists the exported functions named With… whose only result is
// the package's Option type, in the non-test files of dir.
func optionFuncs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var names []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || !strings.HasPrefix(fn.Name.Name, "With") {
				continue
			}
			res := fn.Type.Results
			if res == nil || len(res.List) != 1 {
				continue
			}
			if id, ok := res.List[0].Type.(*ast.Ident); ok && id.Name == "Option" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names
}

// mdLink finds the target of an inline Markdown link, [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsRelativeLinksResolve requires every relative link of the README
// and of docs/*.md to point at a file or directory of the repository, and
// a link with a #fragment into a Markdown file at one of its headings.
func TestDocsRelativeLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	pages = append(pages, "README.md")
	checked := 0
	for _, page := range pages {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		for n, line := range proseLines(string(src)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				_, err := os.Stat(path)
				require.NoError(t, err, "%s:%d: the link %q points at nothing", page, n, target)
				if frag == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				dst, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Contains(t, anchors(string(dst)), frag, "%s:%d: the link %q names no heading of %s", page, n, target, path)
			}
		}
	}
	require.NotZero(t, checked, "no relative link found: the pattern is broken")
}

// proseLines answers the lines of a Markdown text outside fenced code
// blocks, keyed by line number from 1, with code spans blanked out, so that
// code such as ParentValue[T](t, "x") is not read as a link.
func proseLines(md string) map[int]string {
	out := map[int]string{}
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		out[i+1] = codeSpan.ReplaceAllString(line, "`x`")
	}
	return out
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// headings answers the text of the Markdown headings of md, outside fenced
// code blocks.
func headings(md string) []string {
	var out []string
	for _, line := range proseLinesOrdered(md) {
		if strings.HasPrefix(line, "#") {
			out = append(out, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	return out
}

// proseLinesOrdered answers the raw lines of md outside fenced code
// blocks, in order.
func proseLinesOrdered(md string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, line)
		}
	}
	return out
}

// anchors answers the fragment GitHub gives each heading of md: lower
// case, spaces as hyphens, punctuation but hyphens and underscores dropped,
// and -1, -2... after a repeated one.
func anchors(md string) []string {
	seen := map[string]int{}
	var out []string
	for _, h := range headings(md) {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
