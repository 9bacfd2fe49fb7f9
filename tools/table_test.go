package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/view"
)

// Each tool lives in the file named for it: the row's definition and
// call are methods declared there, and so is its name constant; the
// definition names the row's tool (Call dispatches by that name), and
// with every option on, Definitions lists every row in table order.
func TestOneFilePerTool(t *testing.T) {
	declared := declarations(t) // method or constant name → file
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{echoBackend{}}})
	ts, err := New(svc, Options{Sharing: &Sharing{Links: view.NewLinks(time.Now), BaseURL: "http://console.test"}})
	if err != nil {
		t.Fatal(err)
	}
	defs := ts.Definitions()
	if len(defs) != len(toolTable) {
		t.Fatalf("Definitions lists %d tools, the table %d", len(defs), len(toolTable))
	}
	seen := map[string]bool{}
	for i, row := range toolTable {
		file := row.name + ".go"
		if seen[row.name] {
			t.Errorf("%s: two rows", row.name)
		}
		seen[row.name] = true
		if got := row.def(ts).Name; got != row.name {
			t.Errorf("row %s: its definition names %q", row.name, got)
		}
		if defs[i].Name != row.name {
			t.Errorf("Definitions()[%d] is %s, the table's row %s", i, defs[i].Name, row.name)
		}
		for _, fn := range []any{row.def, row.call} {
			m := methodName(fn)
			if declared[m] != file {
				t.Errorf("%s: method %s is declared in %q, not %s", row.name, m, declared[m], file)
			}
		}
		if c := constFor(declared, row.name); c != file {
			t.Errorf("%s: its name constant is declared in %q, not %s", row.name, c, file)
		}
	}
}

// declarations maps the package's (non-test) methods on *Toolset and
// the string constants' values to the file declaring them.
func declarations(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]string{}
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					out[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					v, ok := s.(*ast.ValueSpec)
					if !ok || d.Tok != token.CONST || len(v.Values) != 1 {
						continue
					}
					if lit, ok := v.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out["const "+lit.Value] = name
					}
				}
			}
		}
	}
	return out
}

// methodName is the name of the method a method expression such as
// (*Toolset).send stands for.
func methodName(fn any) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return full[strings.LastIndexByte(full, '.')+1:]
}

func constFor(declared map[string]string, tool string) string {
	return declared["const \""+tool+"\""]
}
