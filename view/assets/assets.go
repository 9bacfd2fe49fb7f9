// Package assets is the browser side of the live view: the console page,
// the view page, their script and stylesheet, and the vendored xterm.js
// they load, embedded in the binary. The server serves FS under /assets/;
// the pages load everything from there (no CDN, no build step).
//
// vendor/xterm is written by scripts/vendor-xterm.sh only: its SHA256SUMS
// is checked against the embedded files by this package's tests.
package assets

import (
	"embed"
	"io/fs"
)

//go:embed *.html *.js *.css vendor/xterm
var files embed.FS

// FS returns the assets: console.html, view.html, console.js, view.js,
// common.js, page.css, and vendor/xterm/ (xterm.mjs, xterm.css, LICENSE,
// VERSION, SHA256SUMS).
func FS() fs.FS {
	return files
}
