//go:build linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatalf("bwrap is not installed: apt-get install bubblewrap (test/run.sh installs it)")
	}
}

// TestBubblewrapReportsShell runs a real bwrap: ShellPID names the wrapped
// command, bwrap's child and pid 1 of a new pid namespace.
func TestBubblewrapReportsShell(t *testing.T) {
	requireBwrap(t)
	root := t.TempDir()
	r := Resolution{Owner: messages.NewOwner("a"), Mode: WorkspaceWrite, Root: root}
	c, err := Confine(NewBubblewrap(BubblewrapOptions{}), []string{"/bin/sh", "-c", "read line"}, r, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Wrapped() || !strings.HasSuffix(c.Argv[0], "bwrap") || !slices.Equal(c.Argv[len(c.Argv)-3:], []string{"/bin/sh", "-c", "read line"}) {
		t.Fatalf("argv %q: want bwrap ... -- and the exact command", c.Argv)
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.ExtraFiles = c.ExtraFiles
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	for _, f := range c.ExtraFiles {
		_ = f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := c.Shell(ctx, cmd.Process.Pid)
	if err != nil {
		t.Fatalf("ShellPID: %v", err)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var ppid, nspid string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			nspid = strings.Join(strings.Fields(v), " ")
		}
	}
	if ppid != strconv.Itoa(cmd.Process.Pid) || nspid != strconv.Itoa(pid)+" 1" {
		t.Fatalf("reported pid %d: parent %s (bwrap is %d), NSpid %q; want bwrap's child, pid 1 inside", pid, ppid, cmd.Process.Pid, nspid)
	}
}

// A bwrap that fails before starting anything ends the report pipe: the
// error says so instead of hanging.
func TestBubblewrapFailsEarly(t *testing.T) {
	requireBwrap(t)
	r := Resolution{Mode: ReadOnly, Root: t.TempDir()}
	c, err := Confine(NewBubblewrap(BubblewrapOptions{}), []string{"/bin/true"}, r, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	argv := slices.Insert(slices.Clone(c.Argv), 1, "--no-such-option")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = c.ExtraFiles
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range c.ExtraFiles {
		_ = f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.Shell(ctx, cmd.Process.Pid)
	_ = cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "exited before starting the shell") || ctx.Err() != nil {
		t.Fatalf("ShellPID after a failed bwrap: %v", err)
	}
}

func TestBubblewrapMissing(t *testing.T) {
	r := Resolution{Mode: WorkspaceWrite, Root: t.TempDir()}
	_, err := Confine(NewBubblewrap(BubblewrapOptions{Path: "/nonexistent/bwrap"}), []string{"/bin/bash"}, r, "")
	var ue *UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Fatalf("missing bwrap: %v", err)
	}
}

func TestReadChildPIDCancel(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close() // held open: only the cancellation can end the read
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("test: give up")
	done := make(chan error, 1)
	go func() {
		_, err := readChildPID(ctx, pr)
		done <- err
	}()
	cancel(cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("readChildPID: %v, want the cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readChildPID ignored the cancellation")
	}

	pr2, pw2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr2.Close()
	_, _ = pw2.WriteString(`{"child-pid": 0}`)
	_ = pw2.Close()
	if _, err := readChildPID(context.Background(), pr2); err == nil {
		t.Fatal("child pid 0 accepted")
	}
}

func TestBubblewrapMissingRoot(t *testing.T) {
	requireBwrap(t)
	r := Resolution{Mode: ReadOnly, Root: "/nonexistent/ptyactor-root"}
	if _, err := Confine(NewBubblewrap(BubblewrapOptions{}), []string{"/bin/bash"}, r, "/"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing root: %v, want ErrInvalid", err)
	}
}

// TestBubblewrapHides runs a real bwrap over a root holding a secret
// file and a secret folder, both hidden, and a hidden folder that does
// not exist: the shell starts (before, bwrap failed making the missing
// one in the read-only root), reading the file fails, the folder is
// empty, and the file beside them is read.
func TestBubblewrapHides(t *testing.T) {
	requireBwrap(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	file, dir, plain := filepath.Join(root, "token"), filepath.Join(root, "state"), filepath.Join(root, "plain")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{file: "secret-token-1", filepath.Join(dir, "url"): "secret-url-2", plain: "plain-3"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
		r := Resolution{Owner: messages.NewOwner("a"), Mode: m, Root: root}
		b := NewBubblewrap(BubblewrapOptions{Hide: []string{file, dir, filepath.Join(root, "missing", "console")}})
		c, err := Confine(b, []string{"/bin/sh", "-c", "cat token; ls -A state; cat plain; echo; echo done"}, r, "")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
		cmd.ExtraFiles = c.ExtraFiles
		out, err := cmd.CombinedOutput()
		c.Close()
		if err != nil || !strings.Contains(string(out), "plain-3") || !strings.Contains(string(out), "done") {
			t.Fatalf("%s: %v %q", m, err, out)
		}
		if strings.Contains(string(out), "secret") || strings.Contains(string(out), "url") {
			t.Fatalf("%s: a hidden path shows: %q", m, out)
		}
		t.Logf("%s: %q", m, out)
	}
}
