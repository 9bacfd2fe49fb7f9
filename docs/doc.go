// Package docs holds ptyactor's documentation pages and reads their tables,
// so that tests can hold every list the code can check (the tools, the
// flags, the packages, the protocol, the programs the test command
// installs) to the code.
package docs

import (
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pageFS holds the documentation pages of this directory.
//
//go:embed *.md
var pageFS embed.FS

// readPage returns the text of the page name (for example "mcp.md").
func readPage(name string) (string, error) {
	b, err := pageFS.ReadFile(name)
	return string(b), err
}

// tableRows returns the body rows of the first table under the heading whose
// text is heading (any level), each row's cells trimmed. It fails when the
// heading or its table is missing.
func tableRows(markdown, heading string) ([][]string, error) {
	lines := strings.Split(markdown, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && strings.TrimSpace(strings.TrimLeft(l, "#")) == heading {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("no heading %q", heading)
	}
	var rows [][]string
	header := true
	for _, l := range lines[at+1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			if rows != nil || !header {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header:
			header = false
		case strings.HasPrefix(cells[0], "---"):
		default:
			rows = append(rows, cells)
		}
	}
	if header {
		return nil, fmt.Errorf("no table under %q", heading)
	}
	return rows, nil
}

// codeSpans returns the code spans (`...`) of a table cell, in order.
func codeSpans(cell string) []string {
	var spans []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		spans = append(spans, parts[i])
	}
	return spans
}

// CheckFlags fails t unless the flags that usage (a FlagSet's
// PrintDefaults output) defines are exactly those in the first column of
// the tables, each listed once, and each default usage prints is the one
// in the second column. A table is "page#heading", for example
// "mcp.md#ptymcp flags".
func CheckFlags(t testing.TB, usage string, tables ...string) {
	t.Helper()
	var defined []string
	defaults := map[string]string{} // flag -> its default, where usage prints one
	for _, l := range strings.Split(usage, "\n") {
		if strings.HasPrefix(l, "  -") {
			defined = append(defined, strings.Fields(l)[0][1:])
		}
		if m := printedDefault.FindStringSubmatch(l); m != nil && len(defined) > 0 {
			def := m[1]
			if u, err := strconv.Unquote(def); err == nil {
				def = u
			}
			defaults[defined[len(defined)-1]] = def
		}
	}
	listed := map[string]bool{}
	for _, ref := range tables {
		page, heading, _ := strings.Cut(ref, "#")
		text, err := readPage(page)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tableRows(text, heading)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, r := range rows {
			spans := codeSpans(r[0])
			if len(spans) == 0 || !strings.HasPrefix(spans[0], "-") {
				t.Errorf("%s: row %q does not start with a `-flag`", ref, r[0])
				continue
			}
			name := strings.Fields(spans[0][1:])[0]
			if listed[name] {
				t.Errorf("%s: -%s listed twice", ref, name)
			}
			listed[name] = true
			if !slices.Contains(defined, name) {
				t.Errorf("%s: -%s is no flag of the command", ref, name)
			}
			if def, ok := defaults[name]; ok && (len(r) < 2 || !sameDefault(strings.Trim(r[1], "`"), def)) {
				t.Errorf("%s: -%s defaults to %s, the table's second column says otherwise", ref, name, def)
			}
		}
	}
	for _, name := range defined {
		if !listed[name] {
			t.Errorf("flag -%s is in none of the tables %q", name, tables)
		}
	}
}

// printedDefault is how flag.PrintDefaults ends a flag's usage when its
// default is not the zero value.
var printedDefault = regexp.MustCompile(`\(default (.+)\)$`)

// sameDefault tells whether a table's default cell says def; durations
// compare by value (30m is 30m0s).
func sameDefault(cell, def string) bool {
	if cell == def {
		return true
	}
	a, errA := time.ParseDuration(cell)
	b, errB := time.ParseDuration(def)
	return errA == nil && errB == nil && a == b
}
