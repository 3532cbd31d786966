package inspector

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

func TestIndexPageFillsTheBase(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"./", `<base href="./">`},
		{"../../../", `<base href="../../../">`},
		{`"><script>x</script>`, `<base href="&#34;&gt;&lt;script&gt;x&lt;/script&gt;">`},
	} {
		page := string(indexPage(tc.base))
		if !strings.Contains(page, tc.want) {
			t.Errorf("indexPage(%q) has no %s", tc.base, tc.want)
		}
		if strings.Contains(page, basePlaceholder) {
			t.Errorf("indexPage(%q) keeps the placeholder", tc.base)
		}
	}
}

// Every file the page and its modules name is embedded, so a renamed
// module cannot leave a page that loads nothing.
var (
	pageRefs   = regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`)
	moduleRefs = regexp.MustCompile(`(?:from\s+|import\()"\./([^"]+)"`)
)

func TestAssetsNameOnlyEmbeddedFiles(t *testing.T) {
	fsys := assetsFS()
	index, err := fs.ReadFile(fsys, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := pageRefs.FindAllStringSubmatch(string(index), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html names %d assets, want the stylesheet and the entry module", len(refs))
	}
	for _, m := range refs {
		if _, err := fs.Stat(fsys, m[1]); err != nil {
			t.Errorf("index.html names %s: %v", m[1], err)
		}
	}
	modules, err := fs.Glob(fsys, "assets/*.js")
	if err != nil || len(modules) == 0 {
		t.Fatalf("no module embedded: %v", err)
	}
	for _, mod := range modules {
		src, err := fs.ReadFile(fsys, mod)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range moduleRefs.FindAllStringSubmatch(string(src), -1) {
			if _, err := fs.Stat(fsys, "assets/"+m[1]); err != nil {
				t.Errorf("%s imports %s: %v", mod, m[1], err)
			}
		}
	}
}

// The pages insert text through the DOM (textContent, attributes), never
// through HTML parsing, and reach the handler through relative URLs only,
// so they escape what they show and work under any prefix.
var (
	htmlSinks    = regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(`)
	absoluteURLs = regexp.MustCompile(`["'\x60]/(api|assets|runs)\b|https?://`)
)

func TestAssetsEscapeAndStayRelative(t *testing.T) {
	fsys := assetsFS()
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".html")) {
			return err
		}
		src, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			code := line
			if j := strings.Index(code, "//"); j >= 0 && !strings.Contains(code[:j], `"`) {
				code = code[:j] // a comment
			}
			if htmlSinks.MatchString(code) {
				t.Errorf("%s:%d parses HTML or code from a string: %s", path, i+1, strings.TrimSpace(line))
			}
			if absoluteURLs.MatchString(code) && !strings.Contains(code, "http://www.w3.org/") {
				t.Errorf("%s:%d names an absolute URL: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
