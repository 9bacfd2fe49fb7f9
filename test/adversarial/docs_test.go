package adversarial

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/security.md's table of the web surfaces names a case of this
// suite in each row: every name is a test here, and every test here is
// named there (a case without its row is a guarantee nobody reads).
func TestSecurityTableNamesTheCases(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Against a browser, a page or a client on the web surfaces")
	if !ok {
		t.Fatal("docs/security.md has no section on the web surfaces")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(section, -1) {
		named[m[1]] = true
	}
	files, _ := filepath.Glob("*_test.go")
	defined := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(t \*testing\.T\)`).FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
	}
	for n := range named {
		if !defined[n] {
			t.Errorf("docs/security.md names %s, which is no test of test/adversarial", n)
		}
	}
	for n := range defined {
		if !named[n] && n != "TestFixture" && n != "TestSecurityTableNamesTheCases" {
			t.Errorf("%s has no row in docs/security.md's table of the web surfaces", n)
		}
	}
}
