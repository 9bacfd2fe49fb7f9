package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
	"github.com/ptyactor/ptyactor/view"
)

// root is the module's root, from this package's directory.
const root = ".."

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func table(t *testing.T, path, heading string) [][]string {
	t.Helper()
	rows, err := tableRows(read(t, path), heading)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// same fails t unless listed (from a page) and want (from the code) hold
// the same names, each listed once.
func same(t *testing.T, what string, listed, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range listed {
		if seen[n] {
			t.Errorf("%s: %s listed twice", what, n)
		}
		seen[n] = true
		if !slices.Contains(want, n) {
			t.Errorf("%s: %s is listed, but the code has no such one", what, n)
		}
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("%s: %s is missing", what, n)
		}
	}
}

// pkg is what the tests read of go list's answer for a package.
type pkg struct {
	ImportPath, Dir, Doc                               string
	GoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles []string
}

// rel is p's path in the module, with a trailing slash ("actors/").
func (p pkg) rel() string { return strings.TrimPrefix(p.ImportPath, module+"/") + "/" }

const module = "github.com/ptyactor/ptyactor"

// packages is go list ./..., run once for all the tests.
var packages = sync.OnceValues(func() ([]pkg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-json", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

func modulePackages(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := packages()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func lookup(t *testing.T, rel string) pkg {
	t.Helper()
	for _, p := range modulePackages(t) {
		if p.rel() == rel {
			return p
		}
	}
	t.Fatalf("no package %s in go list ./...", rel)
	return pkg{}
}

// TestToolTable holds the README's tool table to the tool schemas.
func TestToolTable(t *testing.T) {
	svc := testkit.Service(t, testkit.ServiceOptions{Config: messages.DefaultConfig()})
	// Every tool: the share tools exist with a console (ptymcp's default).
	ts, err := tools.New(svc, tools.Options{Sharing: &tools.Sharing{Links: view.NewLinks(nil), BaseURL: "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range ts.Definitions() {
		want = append(want, d.Name)
	}
	var listed []string
	for _, r := range table(t, "README.md", "Tools") {
		listed = append(listed, strings.Join(codeSpans(r[0]), " "))
	}
	same(t, "README.md tool table", listed, want)
}

// TestInstallTable holds the list of what the test command installs to
// test/deps.sh.
func TestInstallTable(t *testing.T) {
	deps := read(t, "test/deps.sh")
	start := strings.Index(deps, "need=(")
	if start < 0 {
		t.Fatal("test/deps.sh: no need=( list")
	}
	end := strings.Index(deps[start:], "\n)")
	if end < 0 {
		t.Fatal("test/deps.sh: need=( list not closed")
	}
	var want []string
	for _, m := range regexp.MustCompile(`"(\S+) (\S+)"`).FindAllStringSubmatch(deps[start:start+end], -1) {
		want = append(want, m[1]+" "+m[2])
	}
	if len(want) == 0 {
		t.Fatal("test/deps.sh: no entries read")
	}
	var listed []string
	for _, r := range table(t, "docs/testing.md", "What it installs") {
		listed = append(listed, strings.Join(codeSpans(r[0]), "")+" "+strings.Join(codeSpans(r[1]), ""))
	}
	same(t, "docs/testing.md install table (command, package)", listed, want)
}

// TestTestCommand holds the README's test command to the one CI runs.
func TestTestCommand(t *testing.T) {
	var cmd string
	for _, l := range strings.Split(read(t, ".ci/run"), "\n") {
		if c, ok := strings.CutPrefix(l, "exec "); ok {
			cmd = strings.TrimSpace(c)
		}
	}
	if cmd == "" {
		t.Fatal(".ci/run: no exec line")
	}
	for _, page := range []string{"README.md", "docs/testing.md"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `(\s|$)`).MatchString(read(t, page)) {
			t.Errorf("%s does not give the test command CI runs, %q, on a line of its own", page, cmd)
		}
	}
	if !regexp.MustCompile("(?m)^go run ./cmd/demo\\s").MatchString(read(t, "README.md")) {
		t.Error("README.md does not give `go run ./cmd/demo`")
	}
	if _, err := os.Stat(filepath.Join(root, "cmd/demo")); err != nil {
		t.Error(err)
	}
}

// TestPackageTable holds ARCHITECTURE.md's package table to go list: every
// package appears, and no row names one that does not exist.
func TestPackageTable(t *testing.T) {
	var want []string
	for _, p := range modulePackages(t) {
		if len(p.GoFiles)+len(p.IgnoredGoFiles) > 0 {
			want = append(want, p.rel())
		}
	}
	var listed []string
	for _, r := range table(t, "ARCHITECTURE.md", "Packages") {
		listed = append(listed, codeSpans(r[0])...)
	}
	same(t, "ARCHITECTURE.md package table", listed, want)
}

// TestPackageDocs wants a package doc comment in every package.
func TestPackageDocs(t *testing.T) {
	for _, p := range modulePackages(t) {
		if len(p.GoFiles) > 0 && p.Doc == "" {
			t.Errorf("%s has no package doc comment", p.ImportPath)
		}
	}
}

// TestProtocolTable holds docs/go-api.md's request and event tables, and
// its list of the handle's methods, to the actors and actors/protocol
// packages: a request is an exported type whose doc names its reply
// ("Reply: *T" or "No reply"), an event a type named Event*, the handle
// *Session.
func TestProtocolTable(t *testing.T) {
	var paths []string
	for _, rel := range []string{"actors/", "actors/protocol/"} {
		p := lookup(t, rel)
		for _, name := range p.GoFiles {
			paths = append(paths, filepath.Join(p.Dir, name))
		}
	}
	replies := map[string]string{}
	var events, methods []string
	reply := regexp.MustCompile(`Reply:\s*\*(\w+)`)
	fset := token.NewFileSet()
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.IsExported() {
				if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "Session" {
						methods = append(methods, fn.Name.Name)
					}
				}
			}
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = g.Doc
				}
				text := strings.Join(strings.Fields(doc.Text()), " ")
				switch {
				case strings.HasPrefix(ts.Name.Name, "Event"):
					events = append(events, ts.Name.Name)
				case reply.MatchString(text):
					replies[ts.Name.Name] = reply.FindStringSubmatch(text)[1]
				case strings.Contains(text, "No reply"):
					replies[ts.Name.Name] = "none"
				}
			}
		}
	}
	handle := regexp.MustCompile("(?s)## The session handle\n(.*?)\n## ").FindStringSubmatch(read(t, "docs/go-api.md"))
	if handle == nil {
		t.Fatal("docs/go-api.md: no section \"The session handle\"")
	}
	for _, m := range methods {
		if !strings.Contains(handle[1], "`"+m+"`") {
			t.Errorf("docs/go-api.md, \"The session handle\": Session.%s is missing", m)
		}
	}

	var want, listed []string
	for req := range replies {
		want = append(want, req)
	}
	for _, r := range table(t, "docs/go-api.md", "Requests") {
		req, rep := strings.Join(codeSpans(r[0]), ""), strings.Trim(r[1], "`")
		listed = append(listed, req)
		if got, ok := replies[req]; ok && got != rep {
			t.Errorf("docs/go-api.md: %s answers %s, the table says %s", req, got, rep)
		}
	}
	same(t, "docs/go-api.md request table", listed, want)

	listed = nil
	for _, r := range table(t, "docs/go-api.md", "Events") {
		listed = append(listed, codeSpans(r[0])...)
	}
	same(t, "docs/go-api.md event table", listed, events)
}

// TestConfigTable holds docs/go-api.md's configuration table to
// messages.DefaultConfig: every field, with its default.
func TestConfigTable(t *testing.T) {
	def := reflect.ValueOf(messages.DefaultConfig())
	var want, listed []string
	for i := range def.NumField() {
		want = append(want, def.Type().Field(i).Name)
	}
	for _, r := range table(t, "docs/go-api.md", "Configuration") {
		name := strings.Join(codeSpans(r[0]), "")
		listed = append(listed, name)
		if f := def.FieldByName(name); f.IsValid() && fmt.Sprint(f.Interface()) != r[1] {
			t.Errorf("docs/go-api.md: %s defaults to %v, the table says %s", name, f.Interface(), r[1])
		}
	}
	same(t, "docs/go-api.md configuration table", listed, want)
}

// TestFuzzTargets holds FUZZING.md's target table and the fuzz list of
// test/run.sh to the module's Fuzz functions: each target with its
// package, once.
func TestFuzzTargets(t *testing.T) {
	var want []string
	fset := token.NewFileSet()
	for _, p := range modulePackages(t) {
		for _, name := range append(p.TestGoFiles, p.XTestGoFiles...) {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
					want = append(want, fn.Name.Name+" "+strings.TrimSuffix(p.rel(), "/"))
				}
			}
		}
	}
	var listed []string
	for _, r := range table(t, "FUZZING.md", "The targets") {
		listed = append(listed, strings.Join(codeSpans(r[0]), "")+" "+strings.Join(codeSpans(r[1]), ""))
	}
	same(t, "FUZZING.md target table (target, package)", listed, want)

	listed = nil
	for _, m := range regexp.MustCompile(`(?m)^\s*"(Fuzz\w+) \./(\S+) \d+"`).FindAllStringSubmatch(read(t, "test/run.sh"), -1) {
		listed = append(listed, m[1]+" "+m[2])
	}
	same(t, "test/run.sh fuzz list (target, package)", listed, want)
}

// TestLinks wants every relative link of the pages to reach a file, and
// the README to link every page of docs/ exactly once.
func TestLinks(t *testing.T) {
	pages := []string{"README.md", "ARCHITECTURE.md", "FUZZING.md", "bench/README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		pages = append(pages, filepath.Join("docs", filepath.Base(d)))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	readme := map[string]int{}
	for _, p := range pages {
		for _, m := range link.FindAllStringSubmatch(read(t, p), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			path := filepath.Join(filepath.Dir(p), target)
			if _, err := os.Stat(filepath.Join(root, path)); err != nil {
				t.Errorf("%s links %s, which does not exist", p, m[1])
			}
			if p == "README.md" {
				readme[filepath.ToSlash(path)]++
			}
		}
	}
	for _, d := range docs {
		page := "docs/" + filepath.Base(d)
		if n := readme[page]; n != 1 {
			t.Errorf("README.md links %s %d times, want once", page, n)
		}
	}
}
