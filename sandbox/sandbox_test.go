package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

func TestConfine(t *testing.T) {
	root := t.TempDir()
	argv := []string{"/bin/bash", "--noprofile", "--norc", "-i"}
	r := Resolution{Owner: messages.NewOwner("a"), Mode: DangerFullAccess, Root: root}

	c, err := Confine(nil, argv, r, "")
	if err != nil || !slices.Equal(c.Argv, argv) || c.Wrapped() || len(c.ExtraFiles) != 0 {
		t.Fatalf("full access: %+v %v, want the argv unwrapped", c, err)
	}
	if pid, err := c.Shell(context.Background(), 4242); err != nil || pid != 4242 {
		t.Fatalf("unwrapped Shell: %d %v", pid, err)
	}
	c.Close()

	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		r.Mode = m
		_, err := Confine(nil, argv, r, "")
		var ue *UnavailableError
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || ue.Mode != m {
			t.Fatalf("%s without a provider: %v", m, err)
		}
		if !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "no sandbox provider") {
			t.Fatalf("error %q does not say what is missing and what to install", err)
		}
	}
	if _, err := Confine(nil, nil, r, ""); !errors.Is(err, ErrInvalid) || !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("empty argv: %v", err)
	}
	r.Mode = "everything"
	if _, err := Confine(nil, argv, r, ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad mode: %v", err)
	}
}

// TestBwrapArgs pins the exact bwrap command line of each mode.
func TestBwrapArgs(t *testing.T) {
	const root = "/work/repo"
	common := []string{"--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--as-pid-1",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	tail := []string{"--chdir", root + "/src", "--info-fd", "3", "--seccomp", "4", "--"}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name string
		r    Resolution
		ro   []string
		want []string
	}{
		{"read-only", Resolution{Mode: ReadOnly, Root: root}, nil,
			cat([]string{"--unshare-all"}, common, []string{"--ro-bind", root, root}, tail)},
		{"read-only with network", Resolution{Mode: ReadOnly, Root: root, Network: true}, nil,
			cat([]string{"--unshare-all", "--share-net"}, common, []string{"--ro-bind", root, root}, tail)},
		{"workspace-write", Resolution{Mode: WorkspaceWrite, Root: root}, []string{root + "/.git"},
			cat([]string{"--unshare-all"}, common, []string{"--bind", root, root, "--ro-bind", root + "/.git", root + "/.git"}, tail)},
	} {
		if got := bwrapArgs(tc.r, root+"/src", tc.ro, nil, 3, 4); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// A hidden folder and a hidden file are covered last, after every
	// bind: the folder with a tmpfs, the file with /dev/null.
	got := bwrapArgs(Resolution{Mode: WorkspaceWrite, Root: root}, root, nil,
		[]hidden{{path: "/state/recordings", dir: true}, {path: "/home/u/.config/token"}}, 3, 4)
	want := cat([]string{"--unshare-all"}, common, []string{"--bind", root, root,
		"--tmpfs", "/state/recordings", "--ro-bind", "/dev/null", "/home/u/.config/token",
		"--chdir", root, "--info-fd", "3", "--seccomp", "4", "--"})
	if !slices.Equal(got, want) {
		t.Errorf("hide:\n got %q\nwant %q", got, want)
	}
	for _, forbidden := range []string{"--new-session", "--dev-bind"} {
		if slices.Contains(bwrapArgs(Resolution{Mode: WorkspaceWrite, Root: root}, root, nil, nil, 3, 4), forbidden) {
			t.Errorf("bwrap args hold %s", forbidden)
		}
	}
}

// hideNow keeps what exists, resolved, once: a folder, a file, a link
// to a file (as the file); a missing path is left out, where bwrap would
// have failed every spawn making it in the read-only root.
func TestHideNow(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	dir, file, link := filepath.Join(base, "state"), filepath.Join(base, "token"), filepath.Join(base, "link")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	got := hideNow([]string{dir, filepath.Join(base, "missing", "console"), file, link, dir + "/"})
	want := []hidden{{path: dir, dir: true}, {path: file}}
	if !slices.Equal(got, want) {
		t.Fatalf("hideNow: %+v, want %+v", got, want)
	}
}

func TestReadOnlyUnderRoot(t *testing.T) {
	root := t.TempDir()
	r := Resolution{Mode: WorkspaceWrite, Root: root}
	if ro := readOnlyUnderRoot(r); ro != nil {
		t.Fatalf("no .git yet: %v", ro)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ro := readOnlyUnderRoot(r); !slices.Equal(ro, []string{filepath.Join(root, ".git")}) {
		t.Fatalf(".git: %v", ro)
	}
	r.WritableGit = true
	if ro := readOnlyUnderRoot(r); ro != nil {
		t.Fatalf("writable .git: %v", ro)
	}
	r.WritableGit, r.Mode = false, ReadOnly
	if ro := readOnlyUnderRoot(r); ro != nil {
		t.Fatalf("read-only mode needs no extra binds: %v", ro)
	}
}

func TestSandboxCwd(t *testing.T) {
	base := t.TempDir() // under /tmp on Linux test machines
	root := filepath.Join(base, "root")
	other := filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(root, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, _ = filepath.EvalSymlinks(root)
	other, _ = filepath.EvalSymlinks(other)
	r := Resolution{Mode: WorkspaceWrite, Root: root}
	if got, err := sandboxCwd(r, filepath.Join(root, "sub")); err != nil || got != filepath.Join(root, "sub") {
		t.Fatalf("cwd under the root: %q %v", got, err)
	}
	if got, err := sandboxCwd(r, "/etc"); err != nil || got != "/etc" {
		t.Fatalf("cwd /etc: %q %v", got, err)
	}
	if strings.HasPrefix(other, "/tmp/") {
		if _, err := sandboxCwd(r, other); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "/tmp") {
			t.Fatalf("cwd hidden by the private /tmp: %v", err)
		}
	}
	if _, err := sandboxCwd(r, "/proc/self"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("cwd under /proc: %v", err)
	}
}
