//go:build linux

package test

// Issue 5, "Sandbox modes": read-only, workspace-write and
// danger-full-access, enforced by real bubblewrap on real PTYs. Every
// refusal is checked twice: the shell reports the failure, and the host
// filesystem shows nothing was written. Processes are checked in the host's
// /proc.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	linux "github.com/ptyactor/ptyactor/probes/linux"
	"github.com/ptyactor/ptyactor/sandbox"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// sandboxConfig pushes silence (10 s) and the deadline (20 s) far out:
// every shell command here settles on its prompt marker, and a loaded
// machine must not turn a slow command into an early inferred_idle.
func sandboxConfig() messages.Config {
	cfg := testkit.PTYConfig()
	cfg.IdleSilenceMs = 10000
	cfg.TimeoutMs = 20000
	return cfg
}

// newSandboxed starts a harness whose backend runs under a fresh policy
// with settings s and the bubblewrap provider. HOME is the workspace root,
// so programs that write their history there do not trip over read-only
// paths outside the test's scope.
func newSandboxed(t *testing.T, cfg messages.Config, s sandbox.Settings, opts local.Options) (*harness, *sandbox.Policy) {
	t.Helper()
	requireProgram(t, "bwrap", "bubblewrap")
	p, err := sandbox.NewPolicy(s)
	if err != nil {
		t.Fatalf("NewPolicy(%+v): %v", s, err)
	}
	opts.Policy = p
	opts.Sandbox = sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})
	if opts.Env == nil {
		opts.Env = map[string]string{}
	}
	if _, ok := opts.Env["HOME"]; !ok {
		opts.Env["HOME"] = p.Defaults().Root
	}
	return newHarness(t, cfg, opts), p
}

// spawnSandboxed spawns for owner and checks the process tree: the shell
// is bwrap's child, bwrap is ours, and the shell is pid 1 of a pid
// namespace of its own. It returns the shell's pid and bwrap's.
func (h *harness) spawnSandboxed(owner messages.Owner) (*actors.Session, linux.Stat) {
	h.t.Helper()
	sp, err := h.svc.Spawn(testkit.Ctx(h.t), owner, messages.SpawnRequest{})
	if err != nil {
		h.t.Fatalf("Spawn: %v", err)
	}
	shell := stat(h.t, sp.PID())
	wrapper := stat(h.t, shell.PPID)
	trackShell(sp.PID())
	trackShell(wrapper.PID) // the terminal's POSIX session is bwrap's
	if shell.Comm != "bash" || wrapper.Comm != "bwrap" || wrapper.PPID != os.Getpid() {
		h.t.Fatalf("process tree: shell %d %q, its parent %d %q (parent %d); want bash under bwrap under the test process %d",
			shell.PID, shell.Comm, wrapper.PID, wrapper.Comm, wrapper.PPID, os.Getpid())
	}
	if ns := nsPIDs(h.t, sp.PID()); len(ns) != 2 || ns[1] != 1 {
		h.t.Fatalf("shell NSpid %v: want pid 1 in a pid namespace of its own", ns)
	}
	return sp, wrapper
}

// nsPIDs is the NSpid line of /proc/<pid>/status: the pid in each pid
// namespace, outermost first.
func nsPIDs(t testing.TB, pid int) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("status of %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			var out []int
			for _, f := range strings.Fields(v) {
				n, _ := strconv.Atoi(f)
				out = append(out, n)
			}
			return out
		}
	}
	t.Fatalf("status of %d has no NSpid", pid)
	return nil
}

// pidNS names the pid namespace of pid ("" once it is gone).
func pidNS(pid int) string {
	s, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	return s
}

// inNamespace lists the live processes of pid namespace ns.
func inNamespace(t testing.TB, ns string) []linux.Stat {
	t.Helper()
	var out []linux.Stat
	for _, s := range mustProcs(t) {
		if s.Alive() && pidNS(s.PID) == ns {
			out = append(out, s)
		}
	}
	return out
}

// refused sends a command that must fail on a read-only file system.
func (h *harness) refused(id messages.SessionID, cmd string) {
	h.t.Helper()
	res := h.send(id, cmd)
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode == 0 {
		h.t.Fatalf("Send(%q): %s exit %s, want a failure; viewport %q", cmd, res.WaitReason, codeString(res.ExitCode), res.Viewport)
	}
	if !strings.Contains(res.Viewport, "Read-only file system") {
		h.t.Fatalf("Send(%q): viewport %q does not say Read-only file system", cmd, res.Viewport)
	}
}

// absent requires that path does not exist on the host.
func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("host path %s exists (or cannot be checked: %v): the sandbox wrote outside its bounds", path, err)
	}
}

// hostDir is a directory outside /tmp (the sandbox hides the host's /tmp
// behind its own), so the shell sees it and its writes are refused, not
// redirected.
func hostDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "ptyactor-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

func TestSandboxReadOnly(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "data.txt"), []byte("read-only-data-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: root}, local.Options{})
	sp, _ := h.spawnSandboxed(h.owner)
	id := sp.ID()

	// Reading works, and the workspace root is the working directory.
	res := h.prompt(id, "pwd; cat data.txt; head -c 4 /etc/hostname >/dev/null", 0)
	if !hasLine(res.Viewport, root) || !hasLine(res.Viewport, "read-only-data-42") {
		t.Fatalf("viewport %q: want the root %s as cwd and the file's line", res.Viewport, root)
	}

	outside := hostDir(t)
	etc := "/etc/ptyactor-sandbox-" + randHex(4)
	for _, target := range []string{filepath.Join(root, "new.txt"), filepath.Join(outside, "new.txt"), etc} {
		h.refused(id, "touch "+target)
		absent(t, target)
	}
	h.refused(id, "echo overwritten > data.txt")
	if b, _ := os.ReadFile(filepath.Join(root, "data.txt")); string(b) != "read-only-data-42\n" {
		t.Fatalf("data.txt on the host is %q", b)
	}

	// The shell may run as root here; it must not get write access back
	// by remounting (bwrap keeps root's capabilities unless dropped).
	// The tab reads as the blanks a terminal shows.
	if res := h.prompt(id, "grep CapEff /proc/self/status", 0); !hasLine(res.Viewport, "CapEff: 0000000000000000") {
		t.Fatalf("the sandboxed shell has capabilities: %q", res.Viewport)
	}
	res = h.send(id, "mount -o remount,bind,rw /")
	if res.ExitCode == nil || *res.ExitCode == 0 {
		t.Fatalf("remount rw succeeded inside the sandbox: %q", res.Viewport)
	}
	h.refused(id, "touch "+filepath.Join(outside, "after-remount"))
	absent(t, filepath.Join(outside, "after-remount"))

	// The private /tmp is writable and never reaches the host's.
	private := "/tmp/ptyactor-private-" + randHex(4)
	if res := h.prompt(id, "echo tmp-ok > "+private+" && cat "+private, 0); !hasLine(res.Viewport, "tmp-ok") {
		t.Fatalf("private /tmp: viewport %q", res.Viewport)
	}
	absent(t, private)
}

func TestSandboxWorkspaceWrite(t *testing.T) {
	newRoot := func(t *testing.T) string {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}

	t.Run("root writable, outside and .git not", func(t *testing.T) {
		root := newRoot(t)
		h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root}, local.Options{})
		sp, _ := h.spawnSandboxed(h.owner)
		id := sp.ID()

		h.prompt(id, "echo inside-ok > inside.txt && mkdir -p d/e && echo deep > d/e/f", 0)
		for path, want := range map[string]string{"inside.txt": "inside-ok\n", "d/e/f": "deep\n"} {
			if b, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(b) != want {
				t.Fatalf("host %s: %q %v, want %q", path, b, err, want)
			}
		}

		outside := hostDir(t)
		h.refused(id, "touch "+filepath.Join(outside, "x"))
		absent(t, filepath.Join(outside, "x"))
		h.refused(id, "touch "+filepath.Join(filepath.Dir(outside), "ptyactor-sibling-"+randHex(4)))

		h.refused(id, "touch .git/hooks/post-checkout")
		absent(t, filepath.Join(root, ".git", "hooks", "post-checkout"))
		h.refused(id, "echo evil >> .git/HEAD")
		if b, _ := os.ReadFile(filepath.Join(root, ".git", "HEAD")); string(b) != "ref: refs/heads/main\n" {
			t.Fatalf(".git/HEAD on the host is %q", b)
		}
	})

	t.Run("writable .git when configured", func(t *testing.T) {
		root := newRoot(t)
		h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root, WritableGit: true}, local.Options{})
		sp, _ := h.spawnSandboxed(h.owner)
		h.prompt(sp.ID(), "touch .git/hooks/ok", 0)
		if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "ok")); err != nil {
			t.Fatalf(".git write did not reach the host: %v", err)
		}
	})
}

// loopbackListener accepts connections on the host's loopback and counts
// them. No test traffic ever leaves this machine.
func loopbackListener(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

func TestSandboxNetwork(t *testing.T) {
	port, accepted := loopbackListener(t)
	// bash's /dev/tcp: connect, exit 0 on success, 1 on failure.
	probe := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null", port)
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
	ctx := testkit.Ctx(t)
	kill := func(id messages.SessionID) {
		t.Helper()
		if _, err := h.svc.Session(h.owner, id).Close(ctx, ""); err != nil {
			t.Fatalf("Kill: %v", err)
		}
	}

	// Full access: the host's loopback listener is reachable.
	if err := p.SetMode(h.owner, sandbox.DangerFullAccess); err != nil {
		t.Fatal(err)
	}
	full := h.spawn(messages.SpawnRequest{})
	h.prompt(full.ID(), probe, 0)
	testkit.WaitFor(t, 5*time.Second, "the full-access connection", func() bool { return accepted.Load() == 1 })
	kill(full.ID())

	// Sandboxed without network: only the sandbox's own loopback exists.
	if err := p.SetMode(h.owner, ""); err != nil {
		t.Fatal(err)
	}
	denied, _ := h.spawnSandboxed(h.owner)
	h.prompt(denied.ID(), probe, 1)
	if res := h.prompt(denied.ID(), "cat /proc/net/dev | grep -c :", 0); !hasLine(res.Viewport, "1") {
		t.Fatalf("network interfaces inside: %q, want only lo", res.Viewport)
	}
	kill(denied.ID())

	// The policy allows the network: reachable again from the sandbox.
	allow := true
	if err := p.SetNetwork(h.owner, &allow); err != nil {
		t.Fatal(err)
	}
	allowed, _ := h.spawnSandboxed(h.owner)
	h.prompt(allowed.ID(), probe, 0)
	testkit.WaitFor(t, 5*time.Second, "the allowed sandboxed connection", func() bool { return accepted.Load() == 2 })
	kill(allowed.ID())
	// The denied attempt made no connection: only the two that succeeded
	// reached the listener.
	if n := accepted.Load(); n != 2 {
		t.Fatalf("listener accepted %d connections, want 2", n)
	}
}

func TestSandboxFullAccessRunsUnwrapped(t *testing.T) {
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.DangerFullAccess, Root: t.TempDir()}, local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	st := stat(t, sp.PID())
	if st.Comm != "bash" || st.PPID != os.Getpid() || st.Session != sp.PID() {
		t.Fatalf("full-access shell %d %q parent %d session %d: want bash started directly by %d and leading its session",
			sp.PID(), st.Comm, st.PPID, st.Session, os.Getpid())
	}
	if ns := nsPIDs(t, sp.PID()); len(ns) != 1 || pidNS(sp.PID()) != pidNS(os.Getpid()) {
		t.Fatalf("full-access shell NSpid %v: want the host's pid namespace", ns)
	}
	for _, s := range mustProcs(t) {
		if s.Comm == "bwrap" && s.PPID == os.Getpid() {
			t.Fatalf("a bwrap (%d) runs for this test although the mode is danger-full-access", s.PID)
		}
	}
	root := p.Defaults().Root
	h.prompt(sp.ID(), "touch "+filepath.Join(root, "full.txt"), 0)
	if res := h.prompt(sp.ID(), "echo $$", 0); !hasLine(res.Viewport, strconv.Itoa(sp.PID())) {
		t.Fatalf("$$ = %q, want the host pid %d", res.Viewport, sp.PID())
	}
}

func TestSandboxSecretsScrubbed(t *testing.T) {
	parent := func() []string {
		return append(os.Environ(), "DEPLOY_TOKEN=hunter2-token-value", "OPENAI_API_KEY=sk-proj-abcdefghijklmnop", "INNOCENT_NAME=ghp_abcdefghijklmnopqrstuvwxyz", "HARMLESS=visible-42")
	}
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{ParentEnv: parent})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	h.prompt(id, "printenv DEPLOY_TOKEN", 1)
	h.prompt(id, "printenv OPENAI_API_KEY", 1)
	h.prompt(id, "printenv INNOCENT_NAME", 1)
	if res := h.prompt(id, "printenv HARMLESS", 0); !hasLine(res.Viewport, "visible-42") {
		t.Fatalf("HARMLESS: %q", res.Viewport)
	}
	for _, pid := range []int{sp.PID(), wrapper.PID} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"hunter2", "sk-proj-", "ghp_"} {
			if strings.Contains(string(b), secret) {
				t.Fatalf("pid %d's environment holds %q", pid, secret)
			}
		}
	}
}
