package inspector

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
)

// The pages (web/assets, plain JavaScript modules, no build step) use the
// JSON API and nothing else, through URLs relative to the <base> indexPage
// fills in:
//
//   - overview (overview.js): tasks and runs finished per minute with the
//     failure rate (StatsSeries), queue depth and oldest ready age, live
//     nodes, dead letters and their growth, store health warnings; it
//     rereads itself every max(refresh floor, 10 s);
//   - runs (runs.js): the filters live in the URL's query, pages follow
//     nextCursor, the count says "at least" when capped; the first page
//     rereads itself every max(refresh floor, 5 s);
//   - run (run.js, svg.js, waterfall.js, tasks.js): the DAG SVG inlined
//     (parsed as XML, any script or event attribute dropped) so the
//     stylesheet's state-<status> classes colour it, a timeline of task
//     times (each attempt and the backoff between attempts), the task
//     table. It follows the run from the answer's eventCursor over
//     EventSource, setting a box's class as each event comes; a task inside
//     a collapsed group, or one that ends, redraws the SVG, and the rest of
//     the page is reread, throttled to the refresh floor (or ten times what
//     a reread costs, on a large run). A stream the server refuses (501 on
//     a store without events) or that fails three times before it opens
//     gives way to polling at the refresh floor. A finished run is not
//     followed;
//   - task (task.js): attempts, the latest attempt's log lines, progress,
//     payload and result, reread at the refresh floor until the task ends.
//
// Every text is inserted with textContent or setAttribute (assets_test.go
// forbids HTML parsing from strings); the module inspector/browsertest
// drives the pages in headless Chromium.
//
// webFiles holds the pages: index.html, the stylesheet and the JavaScript
// modules under web/assets. They are plain files, so building the library
// needs no front-end tool chain.
//
//go:embed web
var webFiles embed.FS

// basePlaceholder is the text index.html carries in its <base href>; every
// URL the pages use is relative, so filling it in with the way back to the
// mount point makes the view work under any prefix.
const basePlaceholder = "{{BASE}}"

// indexPage returns index.html with its <base href> set to base, the
// relative path from the requested page back to the mount point ("./",
// "../", "../../"...). base is HTML-escaped.
func indexPage(base string) []byte {
	page, err := webFiles.ReadFile("web/index.html")
	if err != nil {
		// The file is embedded at build time; its absence is a build bug.
		panic("inspector: web/index.html is not embedded: " + err.Error())
	}
	return bytes.Replace(page, []byte(basePlaceholder), []byte(html.EscapeString(base)), 1)
}

// assetsFS returns the web subtree (index.html and assets/...), for serving
// the static files.
func assetsFS() fs.FS {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic("inspector: web subtree: " + err.Error())
	}
	return sub
}
