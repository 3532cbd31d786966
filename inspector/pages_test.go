package inspector

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var baseHref = regexp.MustCompile(`<base href="([^"]*)">`)

func TestPagesCarryTheWayBack(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	for path, base := range map[string]string{
		"/":                                 "./",
		"/runs":                             "./",
		"/runs/" + f.etl:                    "../",
		"/runs/" + f.etl + "/tasks/extract": "../../../",
		"/runs/a%2Fb/tasks/x%20y":           "../../../",
	} {
		rec := do(h, "GET", path, nil)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
			continue
		}
		if m := baseHref.FindStringSubmatch(rec.Body.String()); m == nil || m[1] != base {
			t.Errorf("%s: base %q, want %q", path, m, base)
		}
	}
	for _, path := range []string{"/nothing", "/runs/x/y", "/runs/", "/runs/x/tasks/", "/assets/", "/assets/nope.js"} {
		if rec := do(h, "GET", path, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, rec.Code)
		}
	}
	if rec := do(h, "POST", "/runs", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST a page: %d, want 405", rec.Code)
	}
	rec := do(h, "GET", "/assets/app.js", nil)
	tag := rec.Header().Get("ETag")
	if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-cache" || len(tag) != 26 ||
		!strings.Contains(rec.Header().Get("Content-Type"), "javascript") {
		t.Errorf("asset: %d %v", rec.Code, rec.Header())
	}
	if rec := do(h, "GET", "/assets/app.js", nil, "If-None-Match", tag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("asset revalidated: %d, want 304", rec.Code)
	}
	if other := do(h, "GET", "/assets/style.css", nil).Header().Get("ETag"); other == tag || other == "" {
		t.Errorf("style.css tag %q, app.js %q", other, tag)
	}
}

// get fetches u without following redirects.
func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp, string(b)
}

// followPage opens the page at u as a browser would, resolves the API path
// api against the page's base, and answers the JSON the API answers there.
func followPage(t *testing.T, u, api string) map[string]any {
	t.Helper()
	resp, body := get(t, u)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
	}
	m := baseHref.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s: no base", u)
	}
	page, err := url.Parse(u)
	must(t, err)
	base := page.ResolveReference(&url.URL{Path: m[1]})
	for _, ref := range []string{"assets/app.js", "assets/style.css"} {
		if resp, _ := get(t, base.ResolveReference(&url.URL{Path: ref}).String()); resp.StatusCode != http.StatusOK {
			t.Errorf("%s from %s: %d", ref, u, resp.StatusCode)
		}
	}
	target := base.ResolveReference(&url.URL{Path: api})
	resp, body = get(t, target.String())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s (from %s): %d %s", target, u, resp.StatusCode, body)
	}
	var v map[string]any
	must(t, json.Unmarshal([]byte(body), &v))
	return v
}

// The view works under a prefix: mounted with StripPrefix, behind a proxy
// that keeps the prefix, and behind one that strips it.
func TestPrefixBehindProxies(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	mux := http.NewServeMux()
	mux.Handle("/ops/plait/", http.StripPrefix("/ops/plait", h))
	mux.Handle("/ops/plait", http.StripPrefix("/ops/plait", h))
	mounted := httptest.NewServer(mux)
	defer mounted.Close()
	root := httptest.NewServer(h)
	defer root.Close()

	backend, err := url.Parse(mounted.URL)
	must(t, err)
	keeping := httptest.NewServer(httputil.NewSingleHostReverseProxy(backend))
	defer keeping.Close()
	rootURL, err := url.Parse(root.URL)
	must(t, err)
	stripping := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(rootURL)
		r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, "/ops/plait")
		r.Out.URL.RawPath = strings.TrimPrefix(r.In.URL.RawPath, "/ops/plait")
	}})
	defer stripping.Close()

	for name, front := range map[string]string{"StripPrefix": mounted.URL, "keeping proxy": keeping.URL, "stripping proxy": stripping.URL} {
		t.Run(name, func(t *testing.T) {
			p := front + "/ops/plait"
			if v := followPage(t, p+"/", "api/v1/config"); v["version"] != float64(1) {
				t.Errorf("config from the overview: %v", v)
			}
			if v := followPage(t, p+"/runs", "api/v1/runs"); len(v["runs"].([]any)) != 3 {
				t.Errorf("runs from the runs page: %v", v)
			}
			if v := followPage(t, p+"/runs/"+f.etl, "api/v1/runs/"+f.etl); v["run"].(map[string]any)["id"] != f.etl {
				t.Errorf("run from the run page: %v", v)
			}
			v := followPage(t, p+"/runs/"+f.etl+"/tasks/extract", "api/v1/runs/"+f.etl+"/tasks/extract")
			if v["task"].(map[string]any)["name"] != "extract" {
				t.Errorf("task from the task page: %v", v)
			}
			if name == "stripping proxy" {
				return // the mount point without its slash is the proxy's to redirect
			}
			resp, _ := get(t, p+"?x=1")
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || loc != "plait/?x=1" {
				t.Errorf("mount point without its slash: %d Location %q, want 301 plait/?x=1", resp.StatusCode, loc)
			}
		})
	}
}
