package docs

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMEGoExample builds the README's Go block, as a person who copies
// it would, in a module of its own that requires this one (replaced by
// this checkout; GOFLAGS=-mod=mod and the machine's GOPROXY, with this
// module's go.sum: the dependencies are those of go build ./...), and runs
// it: it starts a real session, and prints what its comments say it
// prints.
func TestREADMEGoExample(t *testing.T) {
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```\n").FindAllStringSubmatch(read(t, "README.md"), -1)
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d Go blocks, want the one example", len(blocks))
	}
	src := blocks[0][1]
	if f, err := format.Source([]byte(src)); err != nil || string(f) != src {
		t.Fatalf("README's Go block is not gofmt'd (%v):\n%s", err, f)
	}
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	goMod := "module example.com/readme\n\ngo 1.26\n\nrequire github.com/ptyactor/ptyactor v0.0.0\n\nreplace github.com/ptyactor/ptyactor => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(mod, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(mod, "readme")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of README's Go block: %v\n%s\n%s", err, out, src)
	}

	run := exec.CommandContext(ctx, bin)
	run.Dir = mod
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("README's Go example: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	// Each line it prints is the one the comment of its Println or
	// Printf says, "[pids]" standing for the pids the close killed.
	var want []string
	for _, m := range regexp.MustCompile(`(?m)fmt\.Print.*// (.*)$`).FindAllStringSubmatch(src, -1) {
		want = append(want, m[1])
	}
	got := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	lines := map[string]string{} // a comment's first word: the line printed
	for _, l := range got {
		lines[strings.Fields(l + " x")[0]] = l
	}
	t.Logf("README's example printed:\n%s", stdout.String())
	if len(want) < 3 {
		t.Fatalf("README's Go block says what %d lines print, want at least 3", len(want))
	}
	for _, w := range want {
		l, ok := lines[strings.Fields(w)[0]]
		pids := regexp.MustCompile(`^killed \[\d+( \d+)*\] <nil>$`)
		switch {
		case !ok:
			t.Errorf("README's example prints no line like %q:\n%s", w, stdout.String())
		case w == "killed [pids] <nil>" && pids.MatchString(l):
		case l != w:
			t.Errorf("README's example prints %q where its comment says %q", l, w)
		}
	}
}
