package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The commands, by their directory under cmd/ and the first words of
// their -help.
var commands = []struct{ name, opens string }{
	{"ptymcp", "ptymcp serves persistent terminals to AI agents over MCP"},
	{"ptyhost", "ptyhost runs ptyactor terminals for remote clients"},
	{"ptyrec", "ptyrec reads the record of a ptyactor session"},
	{"demo", "demo is ptyactor's scripted tour"},
}

// repoRoot is the module's root, two folders up.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goCmd runs the go command in dir, bounded.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runBin runs a built command with args and returns its exit code,
// stdout and stderr.
func runBin(t *testing.T, path string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", path, args, err)
	}
	return code, stdout.String(), stderr.String()
}

// buildSettings reads a binary's build info as the go command shows it
// (go version -m): the main module's version and the vcs settings.
func buildSettings(t *testing.T, path string) (version string, set map[string]string) {
	set = map[string]string{}
	for _, l := range strings.Split(goCmd(t, ".", nil, "version", "-m", path), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			version = f[2]
		case len(f) >= 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				set[k] = v
			}
		}
	}
	return version, set
}

// checkVersion holds a command's -version to its build info, read by the
// go command: the module's version and the revision, when stamped.
func checkVersion(t *testing.T, name, path string) {
	t.Helper()
	code, out, errOut := runBin(t, path, "-version")
	line := strings.TrimSuffix(out, "\n")
	if code != 0 || strings.Contains(line, "\n") || errOut != "" {
		t.Fatalf("%s -version: exit %d, stdout %q, stderr %q; want one line on stdout and exit 0", name, code, out, errOut)
	}
	version, set := buildSettings(t, path)
	want := name + " " + version + " (github.com/ptyactor/ptyactor, "
	if rev := set["vcs.revision"]; rev != "" {
		want += "revision " + rev
	} else {
		want += "revision unknown"
	}
	if !strings.HasPrefix(line, want) {
		t.Errorf("%s -version: %q, want it to start %q (go version -m)", name, line, want)
	}
}

// Every command says its version (-version: one line on stdout, from the
// build info) and opens -help with what it is for and examples, then
// how to call it.
func TestCommandsExplainThemselves(t *testing.T) {
	root, bin := repoRoot(t), t.TempDir()
	for _, c := range commands {
		goCmd(t, root, nil, "build", "-o", filepath.Join(bin, c.name), "./cmd/"+c.name)
	}
	for _, c := range commands {
		path := filepath.Join(bin, c.name)
		checkVersion(t, c.name, path)
		code, out, help := runBin(t, path, "-help")
		if code != 0 || out != "" {
			t.Errorf("%s -help: exit %d, stdout %q; want exit 0, usage on stderr", c.name, code, out)
		}
		head, rest, _ := strings.Cut(help, "\nExamples:\n")
		examples, usage, _ := strings.Cut(rest, "\n\nUsage: ")
		n := strings.Count(examples, "\n  ") + 1
		if !strings.HasPrefix(head, c.opens) || n < 2 || !strings.HasPrefix(examples, "  ") || usage == "" {
			t.Errorf("%s -help opens with %q (%d examples); want %q..., then two or three examples, then Usage:\n%s", c.name, head, n, c.opens, help)
		}
	}
}

// README's install line, from a clone: go install ./cmd/... installs the
// four commands, and each names the clone's revision.
func TestInstallFromClone(t *testing.T) {
	root := repoRoot(t)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): nothing to clone", err)
	}
	rev := strings.TrimSpace(string(head))
	clone := filepath.Join(t.TempDir(), "ptyactor")
	if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", clone, "checkout", "-q", rev).CombinedOutput(); err != nil {
		t.Fatalf("git checkout %s: %v\n%s", rev, err, out)
	}
	gobin := t.TempDir()
	// -buildvcs=true: this machine's go env may turn stamping off; a
	// clone's default (auto) stamps.
	goCmd(t, clone, []string{"GOBIN=" + gobin, "GOFLAGS=-buildvcs=true"}, "install", "./cmd/...")
	entries, err := os.ReadDir(gobin)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"demo", "ptyhost", "ptymcp", "ptyrec"}; !slices.Equal(got, want) {
		t.Fatalf("go install ./cmd/... installed %q, want %q", got, want)
	}
	for _, name := range got {
		checkVersion(t, name, filepath.Join(gobin, name))
		if _, out, _ := runBin(t, filepath.Join(gobin, name), "-version"); !strings.Contains(out, "revision "+rev) {
			t.Errorf("%s from a clone at %s: %q does not name the revision", name, rev[:12], out)
		}
	}
}
