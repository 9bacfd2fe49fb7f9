//go:build linux

package test

// Issue 5, "Sandbox modes": read-only, workspace-write and
// danger-full-access, enforced by real bubblewrap on real PTYs. Every
// refusal is checked twice: the shell reports the failure, and the host
// filesystem shows nothing was written. Processes are checked in the host's
// /proc.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
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

func TestSandboxExactReadiness(t *testing.T) {
	t.Run("python3 REPL", func(t *testing.T) {
		requireProgram(t, "python3", "python3")
		h, _ := newSandboxed(t, readinessConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
		sp, _ := h.spawnSandboxed(h.owner)
		id := sp.ID()
		endsWith(t, "python3 -q", h.exactLine(id, "python3 -q", "python3"), ">>> ")
		res := h.exactLine(id, "1+1", "python3")
		if !hasLine(res.Viewport, "2") {
			t.Fatalf("1+1: viewport %q has no line 2", res.Viewport)
		}
		h.shellPrompt(id, "exit()", 0)
	})

	t.Run("less reads /dev/tty", func(t *testing.T) {
		// Inside the sandbox /dev is bwrap's; the host must still resolve
		// less's /dev/tty to this session's terminal.
		requireProgram(t, "less", "less")
		h, _ := newSandboxed(t, readinessConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()},
			local.Options{Env: map[string]string{"LESS": "", "LESSOPEN": ""}})
		sp, _ := h.spawnSandboxed(h.owner)
		id := sp.ID()
		if res := h.exactLine(id, "printf 'piped-%s\\n' 1 2 3 | less", "less"); !onScreen(res, "piped-3") {
			t.Fatalf("less: screen %+v has no line piped-3", res.Screen)
		}
		res := h.sendReq(id, messages.SendRequest{Text: "q"})
		if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("q: %q exit %s, want the shell prompt with exit 0; viewport %q", res.WaitReason, codeString(res.ExitCode), res.Viewport)
		}
	})
}

// foregroundIn waits until the terminal of shell hands its foreground to a
// group running comm, among the members of POSIX session sid, and returns
// that group.
func foregroundIn(t testing.TB, shell, sid int, comm string) int {
	t.Helper()
	var pgid int
	testkit.WaitFor(t, 10*time.Second, "a foreground "+comm, func() bool {
		sh, err := linux.ReadStat(linux.FS{}, shell)
		if err != nil || sh.TPGID <= 0 || sh.TPGID == shell {
			return false
		}
		for _, s := range sessionMembers(t, sid) {
			if s.Comm == comm && s.PGRP == sh.TPGID {
				pgid = sh.TPGID
				return true
			}
		}
		return false
	})
	return pgid
}

func TestSandboxSignalsAndJobControl(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ctx := testkit.Ctx(t)

	op, err := h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid := foregroundIn(t, sp.PID(), wrapper.PID, "sleep")
	r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT)
	if err != nil || !r.Delivered || r.TargetPgid != pgid {
		t.Fatalf("SIGINT: %+v %v, want delivered to the sleep's group %d", r, err, pgid)
	}
	if res, err := op.Result(ctx); err != nil || res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("interrupted send: %+v %v, want stdin_read exit 130", res, err)
	}

	// Job control: the shell kept the PTY as its controlling terminal
	// (bwrap ran without --new-session), so ^Z stops a job and the shell
	// takes the terminal back.
	op, err = h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	pgid = foregroundIn(t, sp.PID(), wrapper.PID, "sleep")
	if r, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGTSTP); err != nil || r.TargetPgid != pgid {
		t.Fatalf("SIGTSTP: %+v %v", r, err)
	}
	if res, err := op.Result(ctx); err != nil || res.ExitCode == nil || *res.ExitCode != 148 {
		t.Fatalf("stopped send: %+v %v, want exit 148", res, err)
	}
	if res := h.prompt(id, "jobs", 0); !strings.Contains(res.Viewport, "Stopped") {
		t.Fatalf("jobs: %q, want a stopped job", res.Viewport)
	}
	// fg continues it in the foreground; ^C ends it there.
	op, err = h.svc.Session(h.owner, id).StartSend(ctx, messages.SendRequest{Text: "fg", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := foregroundIn(t, sp.PID(), wrapper.PID, "sleep"); got != pgid {
		t.Fatalf("fg: foreground group %d, want the stopped job's %d", got, pgid)
	}
	testkit.WaitFor(t, 10*time.Second, "the job to run again", func() bool { return stat(t, pgid).State != 'T' })
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGINT); err != nil {
		t.Fatalf("SIGINT after fg: %v", err)
	}
	if res, err := op.Result(ctx); err != nil || res.ExitCode == nil || *res.ExitCode != 130 {
		t.Fatalf("fg then SIGINT: %+v %v, want exit 130", res, err)
	}

	// SIGKILL at the shell's own group is refused; the shell is alive.
	if _, err := h.svc.Session(h.owner, id).Signal(ctx, messages.SIGKILL); !errors.Is(err, messages.ErrRefuseKillShell) {
		t.Fatalf("SIGKILL to the shell: %v, want ErrRefuseKillShell", err)
	}
	h.prompt(id, "true", 0)
}

func TestSandboxTeardown(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	id := sp.ID()
	ns := pidNS(sp.PID())
	h.prompt(id, "sleep 301 &", 0)
	h.prompt(id, "(trap '' TERM; sleep 302) &", 0)
	// A daemon: leaves the session and is orphaned. Without the sandbox it
	// would re-parent to init and escape; here it re-parents to the shell,
	// pid 1 of the namespace.
	h.prompt(id, "(setsid sleep 303 &); true", 0)

	var members []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "three sleeps, one ignoring SIGTERM, one orphaned daemon", func() bool {
		members = inNamespace(t, ns)
		sleeps, deaf, daemon := 0, 0, 0
		for _, p := range members {
			if p.Comm != "sleep" {
				continue
			}
			sleeps++
			if ignoresSignal(p.PID, syscall.SIGTERM) {
				deaf++
			}
			if p.Session != wrapper.PID && p.PPID == sp.PID() {
				daemon++
			}
		}
		return sleeps == 3 && deaf == 1 && daemon == 1
	})

	report, err := h.svc.Session(h.owner, id).Close(testkit.Ctx(t), "")
	closed := !report.Joined
	if err != nil || !closed {
		t.Fatalf("Kill: closed=%v err=%v", closed, err)
	}
	if len(report.Survivors) != 0 || len(report.Killed) == 0 || report.Killed[len(report.Killed)-1] != sp.PID() {
		t.Fatalf("report %+v: want no survivors and the shell %d killed last", report, sp.PID())
	}
	for _, p := range members {
		if p.PID != sp.PID() && !slices.Contains(report.Killed, p.PID) {
			t.Errorf("report.Killed %v misses pid %d (%s)", report.Killed, p.PID, p.Comm)
		}
		if !gone(p.Identity()) {
			t.Errorf("pid %d (%s) survived Kill", p.PID, p.Comm)
		}
	}
	if !gone(wrapper.Identity()) {
		t.Errorf("bwrap %d survived Kill", wrapper.PID)
	}
	if left := inNamespace(t, ns); len(left) != 0 {
		t.Fatalf("the sandbox's pid namespace still has processes:\n  %s", describe(left))
	}
	if left := sessionMembers(t, wrapper.PID); len(left) != 0 {
		t.Fatalf("the terminal's session still has members:\n  %s", describe(left))
	}
	h.waitListEmpty("after Kill")
}

// When the sandboxed shell exits by itself, the kernel ends its pid
// namespace: a job it left running goes with it.
func TestSandboxShellExitEndsSandbox(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()}, local.Options{})
	sp, wrapper := h.spawnSandboxed(h.owner)
	ns := pidNS(sp.PID())
	h.prompt(sp.ID(), "nohup sleep 304 >/dev/null 2>&1 &", 0)
	testkit.WaitFor(t, 10*time.Second, "the background sleep", func() bool { return len(inNamespace(t, ns)) == 2 })
	res := h.send(sp.ID(), "exit 7")
	if res.WaitReason != messages.WaitSessionExit || res.Status.ExitCode == nil || *res.Status.ExitCode != 7 {
		t.Fatalf("exit 7: %+v, want session_exit with code 7", res)
	}
	testkit.WaitFor(t, 10*time.Second, "the sandbox's namespace to empty", func() bool { return len(inNamespace(t, ns)) == 0 })
	if !gone(wrapper.Identity()) {
		t.Fatalf("bwrap %d outlived its shell", wrapper.PID)
	}
	if _, err := sp.Close(testkit.Ctx(t), ""); err != nil {
		t.Fatalf("Kill after exit: %v", err)
	}
}

func TestSandboxModeFence(t *testing.T) {
	root := t.TempDir()
	opts := local.Options{}
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root}, opts)
	ctx := testkit.Ctx(t)
	a := h.owner
	b, err := h.svc.NewOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := h.spawnSandboxed(a)

	err = p.SetMode(a, sandbox.ReadOnly)
	var ce *sandbox.ChangeRefusedError
	if !errors.Is(err, sandbox.ErrChangeRefused) || !errors.As(err, &ce) || ce.Sessions != 1 {
		t.Fatalf("SetMode with an open session: %v, want *ChangeRefusedError for 1 session", err)
	}
	const want = `cannot change sandbox mode from "workspace-write" to "read-only" while persistent terminal sessions are open or being created; wait for creation to settle and close them first`
	if err.Error() != want {
		t.Fatalf("error text:\n  %s\nwant\n  %s", err, want)
	}
	if got := p.Resolve(a, "").Mode; got != sandbox.WorkspaceWrite {
		t.Fatalf("after a refused change the mode is %s", got)
	}
	// A change that keeps the effective mode is fine, even now.
	for _, m := range []sandbox.Mode{sandbox.WorkspaceWrite, ""} {
		if err := p.SetMode(a, m); err != nil {
			t.Fatalf("SetMode(%q), no effective change: %v", m, err)
		}
	}
	allow := true
	if err := p.SetNetwork(a, &allow); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetNetwork with an open session: %v, want refused", err)
	}
	// Keyed to the exact owner: b has nothing open.
	if err := p.SetMode(b, sandbox.ReadOnly); err != nil {
		t.Fatalf("other owner's SetMode: %v", err)
	}
	if got := p.Resolve(b, "").Mode; got != sandbox.ReadOnly {
		t.Fatalf("other owner resolves %s", got)
	}
	// And b's sessions run in b's mode while a's keeps its own.
	spB, _ := h.spawnSandboxed(b)
	if res, err := h.svc.Session(b, spB.ID()).Send(ctx, messages.SendRequest{Text: "touch b.txt", Submit: true}); err != nil || res.ExitCode == nil || *res.ExitCode != 1 {
		t.Fatalf("touch in b's read-only session: %+v %v", res, err)
	}
	h.prompt(sp.ID(), "touch a.txt", 0)
	absent(t, filepath.Join(root, "b.txt"))

	// The fence survives a backend reload: the policy, not the backend,
	// holds it.
	r, err := h.svc.System().Root.RequestFuture(h.svc.PID(), &protocol.UnregisterBackend{Type: "shell"}, 10*time.Second).Result()
	if rep, ok := r.(*protocol.UnregisterBackendReply); err != nil || !ok || !rep.Removed {
		t.Fatalf("unregister the backend: %v %v", r, err)
	}
	if types, err := h.svc.ListBackends(ctx); err != nil || len(types) != 0 {
		t.Fatalf("backends after unregister: %v %v", types, err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode with the backend unloaded: %v, want refused", err)
	}
	opts.Policy, opts.Sandbox = p, sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})
	opts.Env = map[string]string{"HOME": root}
	if _, err := h.svc.RegisterBackend(ctx, local.New(h.options(opts))); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode after the reload: %v, want refused", err)
	}
	h.prompt(sp.ID(), "true", 0)

	// Closed: the change goes through, and the next session has it.
	if _, err := sp.Close(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMode(a, sandbox.ReadOnly); err != nil {
		t.Fatalf("SetMode after close: %v", err)
	}
	sp, _ = h.spawnSandboxed(a)
	h.refused(sp.ID(), "touch c.txt")
	absent(t, filepath.Join(root, "c.txt"))
}

func TestSandboxModeFencePendingSpawn(t *testing.T) {
	// cat prints nothing, so the startup wait never settles: the spawn
	// stays pending until it is cancelled. Sandboxed, cat is pid 1 of its
	// namespace and ignores the hang-up, so the rollback needs SIGKILL.
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()},
		local.Options{Shell: "/bin/cat", Args: []string{}})
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() {
		_, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
		errc <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "the spawn to hold the fence", func() bool { return p.Sessions(h.owner) == 1 })
	if err := p.SetMode(h.owner, sandbox.ReadOnly); !errors.Is(err, sandbox.ErrChangeRefused) {
		t.Fatalf("SetMode during a pending spawn: %v, want refused", err)
	}
	if err := p.SetMode(h.owner, sandbox.WorkspaceWrite); err != nil {
		t.Fatalf("SetMode without effective change during a pending spawn: %v", err)
	}
	var cat linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the sandboxed cat", func() bool {
		for _, s := range tagged(t, h.tag) {
			if s.Comm == "cat" {
				cat = s
				return true
			}
		}
		return false
	})
	select {
	case err := <-errc:
		t.Fatalf("the spawn settled early: %v", err)
	default:
	}
	cause := errors.New("test: stop the pending spawn")
	cancel(cause)
	if err := <-errc; !errors.Is(err, cause) {
		t.Fatalf("cancelled spawn: %v, want the cause", err)
	}
	// The failed spawn was rolled back and released its hold before the
	// spawn returned.
	if !gone(cat.Identity()) {
		t.Fatalf("the pending spawn's cat %d survived the rollback", cat.PID)
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("owner holds %d leases after the spawn failed", n)
	}
	if err := p.SetMode(h.owner, sandbox.ReadOnly); err != nil {
		t.Fatalf("SetMode after the spawn settled: %v", err)
	}
}

// A sandbox that cannot be built (the workspace root vanished after the
// policy was made) fails the spawn before any process starts, names the
// root, and releases the fence.
func TestSandboxSetupFailure(t *testing.T) {
	root := t.TempDir()
	var envBuilt atomic.Bool
	h, p := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: root}, local.Options{
		ParentEnv: func() []string { envBuilt.Store(true); return os.Environ() }})
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	_, err := h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{Cwd: "/"})
	if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), root) {
		t.Fatalf("Spawn with the root gone: %v, want sandbox.ErrInvalid naming %s", err, root)
	}
	if envBuilt.Load() {
		t.Fatal("the backend got as far as building a process environment")
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
}

func TestSandboxUnavailable(t *testing.T) {
	for name, sb := range map[string]sandbox.Sandbox{
		"no provider": nil,
		"no bwrap":    sandbox.NewBubblewrap(sandbox.BubblewrapOptions{Path: "/nonexistent/ptyactor/bwrap"}),
	} {
		t.Run(name, func(t *testing.T) {
			p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var envBuilt atomic.Bool // the backend builds the child's environment right before it starts a process
			h := newHarness(t, testkit.PTYConfig(), local.Options{Policy: p, Sandbox: sb, ParentEnv: func() []string {
				envBuilt.Store(true)
				return os.Environ()
			}})
			_, err = h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
			var ue *sandbox.UnavailableError
			if !errors.Is(err, sandbox.ErrUnavailable) || !errors.As(err, &ue) || ue.Mode != sandbox.ReadOnly {
				t.Fatalf("Spawn: %v, want *sandbox.UnavailableError for read-only", err)
			}
			if !strings.Contains(err.Error(), "apt-get install bubblewrap") {
				t.Fatalf("error %q does not say what to install", err)
			}
			if envBuilt.Load() {
				t.Fatal("the backend got as far as building a process environment")
			}
			if ps := tagged(t, h.tag); len(ps) != 0 {
				t.Fatalf("processes started:\n  %s", describe(ps))
			}
			if n := p.Sessions(h.owner); n != 0 {
				t.Fatalf("failed spawn left %d leases", n)
			}
			// Full access needs no provider.
			if err := p.SetMode(h.owner, sandbox.DangerFullAccess); err != nil {
				t.Fatal(err)
			}
			h.prompt(h.spawn(messages.SpawnRequest{}).ID(), "true", 0)
		})
	}
}

// With the host a child subreaper, the wrapper is the host's child and
// carries the session's tag: teardown must never take it for an adopted
// orphan. The shell ends by the hang-up (exit 129 passed on by bwrap), not
// by a signal teardown sent the wrapper.
func TestSandboxWithSubreaper(t *testing.T) {
	h, _ := newSandboxed(t, sandboxConfig(), sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: t.TempDir()}, local.Options{Subreaper: true})
	sp, wrapper := h.spawnSandboxed(h.owner)
	h.prompt(sp.ID(), "sleep 305 &", 0)
	report, err := sp.Close(testkit.Ctx(t), "")
	if err != nil || len(report.Survivors) != 0 {
		t.Fatalf("Kill: %+v %v", report, err)
	}
	if slices.Contains(report.Killed, wrapper.PID) {
		t.Fatalf("teardown signalled the wrapper %d: killed %v", wrapper.PID, report.Killed)
	}
	if st := report.Status; st.ExitCode == nil || *st.ExitCode != 129 {
		t.Fatalf("status %s, want exit code 129 (bash's hang-up)", st)
	}
	if !gone(wrapper.Identity()) {
		t.Fatalf("bwrap %d survived", wrapper.PID)
	}
}

// brokenBwrap is the real provider with an option bwrap rejects: bwrap
// exits before it starts the shell.
type brokenBwrap struct{ sandbox.Sandbox }

func (b brokenBwrap) Wrap(argv []string, r sandbox.Resolution, cwd string) (*sandbox.Command, error) {
	c, err := b.Sandbox.Wrap(argv, r, cwd)
	if err == nil {
		c.Argv = slices.Insert(c.Argv, 1, "--no-such-option")
	}
	return c, err
}

// hangingWrapper starts a process tree and never reports its shell: the
// start waits in ShellPID until the spawn is cancelled.
type hangingWrapper struct{}

func (hangingWrapper) Wrap([]string, sandbox.Resolution, string) (*sandbox.Command, error) {
	return &sandbox.Command{
		Argv: []string{"/bin/sh", "-c", "sleep 600 & exec sleep 601"},
		ShellPID: func(ctx context.Context, root int) (int, error) {
			<-ctx.Done()
			return 0, context.Cause(ctx)
		},
	}, nil
}

// A spawn cancelled while its wrapper has not reported the shell returns
// only once the terminal's whole session is gone: killing the wrapper
// alone leaves what it started running.
func TestSpawnCancelledBeforeTheWrapperReports(t *testing.T) {
	p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sandboxConfig(), local.Options{Policy: p, Sandbox: hangingWrapper{}})
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() {
		_, err := h.svc.Spawn(ctx, h.owner, messages.SpawnRequest{})
		errc <- err
	}()
	var procs []linux.Stat
	testkit.WaitFor(t, 10*time.Second, "the wrapper's two sleeps", func() bool {
		procs = procs[:0]
		for _, s := range tagged(t, h.tag) {
			if s.Comm == "sleep" {
				procs = append(procs, s)
			}
		}
		return len(procs) == 2
	})
	cause := errors.New("test: stop the spawn")
	cancel(cause)
	if err := <-errc; !errors.Is(err, cause) {
		t.Fatalf("Spawn: %v, want the cause", err)
	}
	for _, s := range procs {
		if !gone(s.Identity()) {
			t.Errorf("%s %d outlived the failed spawn", s.Comm, s.PID)
		}
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
}

// A wrapper that dies before starting the shell fails the spawn with its
// own words (what it wrote to the terminal), and releases the fence.
func TestSandboxWrapperFailsEarly(t *testing.T) {
	requireProgram(t, "bwrap", "bubblewrap")
	p, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.ReadOnly, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sandboxConfig(), local.Options{Policy: p, Sandbox: brokenBwrap{sandbox.NewBubblewrap(sandbox.BubblewrapOptions{})}})
	_, err = h.svc.Spawn(testkit.Ctx(t), h.owner, messages.SpawnRequest{})
	if err == nil || !strings.Contains(err.Error(), "exited before starting the shell") || !strings.Contains(err.Error(), "--no-such-option") {
		t.Fatalf("Spawn: %v, want bwrap's early exit with its message", err)
	}
	if n := p.Sessions(h.owner); n != 0 {
		t.Fatalf("failed spawn left %d leases", n)
	}
	testkit.WaitFor(t, 10*time.Second, "no process of the failed spawn", func() bool { return len(tagged(t, h.tag)) == 0 })
}
