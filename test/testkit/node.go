package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeScript finds node and script in folder, one of test/'s npm packages
// (test/player, test/mcpclient-ts), with the package pkg in its
// node_modules. It skips the test when node or the package is missing,
// unless CI is set: test/deps.sh installs both, so there their absence is
// a failure. The folder is found from the module's root, so the caller's
// own depth in the tree does not matter.
func NodeScript(t testing.TB, folder, pkg, script string) (node, path string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + " (source test/deps.sh installs it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir := filepath.Join(moduleRoot(t), "test", folder)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		missing("%s is not installed in test/%s: %v", pkg, folder, err)
	}
	return node, filepath.Join(dir, script)
}

// moduleRoot is the folder of go.mod above the test's working directory
// (go test runs a test in its package's folder).
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}
