// Command demo is ptyactor's main job: a scripted tour of a persistent bash
// session on a real PTY. Each step prints what was sent, why the send
// returned (wait reason), the exit code when the prompt marker carried one,
// and the latency.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/cmd/internal/cli"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/sandbox"
)

func main() {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	cli.Usage(fs, "go run ./cmd/demo [-version]",
		`demo is ptyactor's scripted tour: a persistent bash session on a real
PTY, step by step, each step printing what was sent, why the send
returned, the exit code and the latency.`,
		`go run ./cmd/demo`, `go run ./cmd/demo -version`)
	version := cli.VersionFlag(fs)
	_ = fs.Parse(os.Args[1:]) // ExitOnError: -help exits 0, a bad flag 2
	if *version {
		fmt.Println(cli.Version("demo"))
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type tour struct {
	svc   *actors.Service
	owner messages.Owner
	sh    *actors.Session
	step  int
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	svc, err := startService(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = svc.Shutdown(context.Background()) }()
	owner, err := svc.NewOwner(ctx, "demo")
	if err != nil {
		return err
	}
	t := &tour{svc: svc, owner: owner}
	t0 := time.Now()
	for _, s := range t.steps() {
		t.header(s.title)
		if err := s.do(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("\ndone in %s\n", ms(time.Since(t0)))
	return nil
}

// startService starts the runtime with the local backend. Silence is only
// the last resort; the exact tier proves the REPL and less steps ready, so
// a long silence costs the tour nothing.
func startService(ctx context.Context) (*actors.Service, error) {
	cfg := messages.DefaultConfig()
	cfg.IdleSilenceMs = 10000
	cfg.MaxReadBytes = 2048
	cfg.TimeoutMs = 20000
	cfg.DisposeGraceMs = 1000
	svc, err := actors.NewService(actors.Options{Config: cfg})
	if err != nil {
		return nil, err
	}
	if _, err := svc.RegisterBackend(ctx, local.New(local.Options{Subreaper: true})); err != nil {
		_ = svc.Shutdown(context.Background())
		return nil, err
	}
	return svc, nil
}

// step is one stop of the tour: its title, then what it does.
type step struct {
	title string
	do    func(context.Context) error
}

func (t *tour) steps() []step {
	return []step{
		{"open a persistent bash session", t.open},
		{"state persists across sends: cd and export, then read both back", t.sends(true,
			"cd /tmp && mkdir -p ptyactor-demo && cd ptyactor-demo", "export GREETING='hello from ptyactor'", `pwd; echo "$GREETING"`)},
		{"a failing command reports its exit code", t.sends(true, "ls /definitely/not/here")},
		{"a script of several lines runs to its last line, whose exit code is reported", t.sends(true,
			"for f in a b; do\n  echo \"line $f\"\ndone\n(exit 4) &\nwait $!")},
		{"a python3 REPL: no prompt marker inside it; the kernel shows python waiting on the terminal", t.sends(true,
			"python3 -q", "21 * 2", "exit()")},
		{"a pager: less -d (no dumb-terminal warning) reads /dev/tty on fd 3; quit with q, no Enter", t.pager},
		{"a full-screen program: vim, driven by keys; the result is its screen", t.vimStep},
		{"top: a screen that redraws itself; the exact tier sees it waiting for a key", t.top},
		{"an output flood: the viewport stays bounded and says it was truncated", t.sends(true, "seq 1 200000")},
		{"sleep 30, cancelled: a real SIGINT goes to the foreground group", t.cancel},
		{"page back through scrollback (offset counts back from the newest line)", t.scrollback},
		{"sandbox: workspace-write under bubblewrap; a write outside the workspace is refused", t.sandboxStep},
		{"close: the whole process tree is torn down", t.close},
		{"list: nothing left open", t.list},
	}
}

// sends sends each line in turn, printing each result.
func (t *tour) sends(submit bool, lines ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, l := range lines {
			if _, err := t.send(ctx, l, submit); err != nil {
				return err
			}
		}
		return nil
	}
}

func (t *tour) open(ctx context.Context) error {
	t0 := time.Now()
	sp, err := t.svc.Spawn(ctx, t.owner, messages.SpawnRequest{Name: "tour"})
	if err != nil {
		return err
	}
	t.sh = sp
	fmt.Printf("   session %s (pid %d), ready in %s\n   startup output: %q\n", sp.ID(), sp.PID(), ms(time.Since(t0)), sp.Info().Motd)
	return nil
}

func (t *tour) pager(ctx context.Context) error {
	if _, err := t.send(ctx, "less -d /etc/os-release", true); err != nil {
		return err
	}
	_, err := t.send(ctx, "q", false)
	return err
}

func (t *tour) top(ctx context.Context) error {
	res, err := t.sh.Send(ctx, messages.SendRequest{Text: "top -d 5", Submit: true, Screen: true})
	if err != nil {
		return err
	}
	fmt.Printf("   > top -d 5 (asking for the screen: top draws on the main screen)\n   [wait: %s] [cause: %s] [reader: %s]\n", res.WaitReason, res.Cause, res.Reader)
	if sc := res.Screen; sc != nil {
		fmt.Printf("   screen (first 6 of %d rows):\n%s\n", len(sc.Rows), indent(strings.Join(sc.Rows[:min(6, len(sc.Rows))], "\n")))
	}
	_, err = t.send(ctx, "q", false)
	return err
}

func (t *tour) cancel(ctx context.Context) error {
	sctx, scancel := context.WithTimeoutCause(ctx, 300*time.Millisecond, errors.New("demo: caller gave up after 300ms"))
	defer scancel()
	start := time.Now()
	res, err := t.sh.Send(sctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	fmt.Printf("   > sleep 30\n   caller's error: %v\n", err)
	t.result(res, time.Since(start))
	return nil
}

func (t *tour) scrollback(ctx context.Context) error {
	off, count := 0, 6
	page, err := t.sh.Read(ctx, messages.ReadRequest{Offset: &off, Count: &count})
	if err != nil {
		return err
	}
	fmt.Printf("   lines %d-%d of %d (truncated=%v):\n%s\n", page.LineBegin, page.LineEnd, page.TotalLines, page.Truncated, indent(page.Text))
	return nil
}

func (t *tour) close(ctx context.Context) error {
	start := time.Now()
	report, err := t.sh.Close(ctx, "demo finished")
	if err != nil {
		return err
	}
	fmt.Printf("   killed=%v survivors=%v status=%s in %s\n", report.Killed, report.Survivors, report.Status, ms(time.Since(start)))
	return nil
}

func (t *tour) list(ctx context.Context) error {
	list, err := t.svc.List(ctx, t.owner)
	if err != nil {
		return err
	}
	fmt.Printf("   %d sessions\n", len(list))
	if len(list) != 0 {
		return fmt.Errorf("expected no sessions, got %d", len(list))
	}
	return nil
}

// sandboxStep opens a second session in workspace-write under bubblewrap:
// a write in the workspace lands, a write outside it is refused by the
// kernel, and the owner's mode cannot change while the session is open.
func (t *tour) sandboxStep(ctx context.Context) error {
	workspace, err := os.MkdirTemp("", "ptyactor-workspace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workspace)
	policy, err := sandbox.NewPolicy(sandbox.Settings{Mode: sandbox.WorkspaceWrite, Root: workspace})
	if err != nil {
		return err
	}
	unregister, err := t.svc.RegisterBackend(ctx, local.New(local.Options{
		Type:    "sandboxed",
		Policy:  policy,
		Sandbox: sandbox.NewBubblewrap(sandbox.BubblewrapOptions{}),
		Env:     map[string]string{"HOME": workspace},
	}))
	if err != nil {
		return err
	}
	defer unregister()
	sp, err := t.svc.Spawn(ctx, t.owner, messages.SpawnRequest{Type: "sandboxed", Name: "sandboxed"})
	if errors.Is(err, sandbox.ErrUnavailable) {
		// A fresh machine may lack bwrap until test/run.sh installed it:
		// the refusal itself is part of the tour.
		fmt.Printf("   spawn refused before any process started:\n   %v\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("   session %s (bash pid %d, pid 1 of its own pid namespace), workspace %s\n", sp.ID(), sp.PID(), workspace)
	main := t.sh
	t.sh = sp
	defer func() { t.sh = main }()
	for _, cmd := range []string{"pwd; echo kept > notes.txt && cat notes.txt", "echo escaped > /var/tmp/ptyactor-demo.txt", "echo $$; ls /proc | grep -c '^[0-9]'"} {
		if _, err := t.send(ctx, cmd, true); err != nil {
			return err
		}
	}
	if _, err := os.Stat("/var/tmp/ptyactor-demo.txt"); err == nil {
		return errors.New("the sandboxed write outside the workspace reached the host")
	}
	fmt.Printf("   the owner's mode cannot change while the session is open:\n   %v\n", policy.SetMode(t.owner, sandbox.DangerFullAccess))
	report, err := sp.Close(ctx, "sandbox step done")
	if err != nil {
		return err
	}
	fmt.Printf("   killed=%v survivors=%v; SetMode now: %v\n", report.Killed, report.Survivors, policy.SetMode(t.owner, sandbox.DangerFullAccess))
	return nil
}

// vimStep edits a file in vim by keys, shows vim's screen, saves with :wq
// and checks the file.
func (t *tour) vimStep(ctx context.Context) error {
	res, err := t.sh.Send(ctx, messages.SendRequest{Text: "rm -f vim-demo.txt; vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' vim-demo.txt", Submit: true})
	if err != nil {
		return err
	}
	fmt.Printf("   > vim vim-demo.txt\n   [wait: %s] [reader: %s] [alternate screen: %v]\n", res.WaitReason, res.Reader, res.Screen != nil && res.Screen.AltScreen)
	if _, err := t.sh.Send(ctx, messages.SendRequest{Text: "iedited by keys in vim"}); err != nil {
		return err
	}
	res, err = t.sh.Send(ctx, messages.SendRequest{Keys: []string{"Escape"}})
	if err != nil || res.Screen == nil {
		return fmt.Errorf("vim escape: %v", err)
	}
	fmt.Printf("   > (keys: Escape)\n   screen, first 3 of %d rows, cursor at %d,%d:\n%s\n", len(res.Screen.Rows), res.Screen.CursorRow, res.Screen.CursorCol, indent(strings.Join(res.Screen.Rows[:3], "\n")))
	if _, err := t.send(ctx, ":wq", true); err != nil {
		return err
	}
	b, err := os.ReadFile("/tmp/ptyactor-demo/vim-demo.txt")
	if err != nil || string(b) != "edited by keys in vim\n" {
		return fmt.Errorf("vim-demo.txt %q %v", b, err)
	}
	fmt.Printf("   vim-demo.txt now holds %q\n", b)
	return nil
}

func (t *tour) header(s string) {
	t.step++
	fmt.Printf("\n%d. %s\n", t.step, s)
}

func (t *tour) send(ctx context.Context, text string, submit bool) (messages.SendResult, error) {
	start := time.Now()
	res, err := t.sh.Send(ctx, messages.SendRequest{Text: text, Submit: submit})
	if err != nil {
		return res, fmt.Errorf("send %q: %w", text, err)
	}
	fmt.Printf("   > %s\n", strings.ReplaceAll(text, "\n", "\n   > "))
	t.result(res, time.Since(start))
	return res, nil
}

func (t *tour) result(res messages.SendResult, d time.Duration) {
	code := "-"
	if res.ExitCode != nil {
		code = fmt.Sprint(*res.ExitCode)
	}
	reader := "-"
	if res.Reader != "" {
		reader = res.Reader
	}
	fmt.Printf("   [wait: %s] [exit: %s] [reader: %s] [session: %s] [truncated: %v] [%s]\n", res.WaitReason, code, reader, res.Status, res.Truncated, ms(d))
	fmt.Printf("   viewport (%d bytes):\n%s\n", len(res.Viewport), indent(lastLines(res.Viewport, 8)))
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "   | " + strings.ReplaceAll(s, "\n", "\n   | ")
}

// lastLines keeps a tour readable: a flood's bounded viewport is still
// thousands of lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return fmt.Sprintf("… (%d earlier lines)\n", len(lines)-n) + strings.Join(lines[len(lines)-n:], "\n")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
