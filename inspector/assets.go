package inspector

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
)

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
