package assets_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/view/assets"
)

// TestVendorSums holds the embedded vendor files to their SHA256SUMS, so a
// vendored file changes only through scripts/vendor-xterm.sh, and every
// file in the folder is listed.
func TestVendorSums(t *testing.T) {
	const dir = "vendor/xterm"
	fsys := assets.FS()
	sums, err := fs.ReadFile(fsys, path.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: line %q is not \"<sha256>  <name>\"", sc.Text())
		}
		listed[name] = true
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			t.Errorf("SHA256SUMS lists %s: %v", name, err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s/%s: sha256 %s, SHA256SUMS says %s (run scripts/vendor-xterm.sh instead of editing it)", dir, name, got, want)
		}
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" && !listed[e.Name()] {
			t.Errorf("%s/%s is not in SHA256SUMS", dir, e.Name())
		}
	}
	for _, need := range []string{"xterm.mjs", "xterm.css", "LICENSE", "VERSION"} {
		if !listed[need] {
			t.Errorf("SHA256SUMS does not list %s", need)
		}
	}
	version, _ := fs.ReadFile(fsys, path.Join(dir, "VERSION"))
	if v := strings.TrimSpace(string(version)); !strings.HasPrefix(v, "6.") {
		t.Errorf("vendored xterm.js is %q; the pages are written for 6.x", v)
	}
}

// TestPages wants every page and what it loads embedded.
func TestPages(t *testing.T) {
	var got []string
	err := fs.WalkDir(assets.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"console.html", "console.js", "view.html", "view.js", "secret.html", "secret.js", "common.js", "page.css", "vendor/xterm/xterm.mjs", "vendor/xterm/xterm.css"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not embedded (have %v)", want, got)
		}
	}
}
