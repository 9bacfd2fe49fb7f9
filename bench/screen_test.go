package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
)

// drawScript is a full-screen program that draws slowly before it reads:
// it enters the alternate screen, draws ten rows 30 ms apart (300 ms), then
// waits for a key; each key repeats the slow drawing with the key's name.
const drawScript = `
import sys, time, tty, termios
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setcbreak(fd)
sys.stdout.write("\x1b[?1049h")
def draw(tag):
    sys.stdout.write("\x1b[H\x1b[2J")
    for i in range(10):
        sys.stdout.write("row %d %s\r\n" % (i, tag)); sys.stdout.flush(); time.sleep(0.03)
    sys.stdout.write("READY %s" % tag); sys.stdout.flush()
draw("start")
while True:
    c = sys.stdin.read(1)
    if c == "q": break
    draw(c)
sys.stdout.write("\x1b[?1049l"); sys.stdout.flush()
termios.tcsetattr(fd, termios.TCSADRAIN, old)
`

// BenchmarkPrematureFullScreen counts results of a full-screen program that
// draws for 300 ms before it reads, which came back before its drawing
// ended (the screen's last row is not READY): the exact tier, not a
// screen-stable timer, decides. The aim is 0 in 200.
func BenchmarkPrematureFullScreen(b *testing.B) {
	cfg := messages.DefaultConfig()
	cfg.IdleSilenceMs = 10000
	svc, o := newService(b, cfg)
	ctx := context.Background()
	dir := b.TempDir()
	script := filepath.Join(dir, "draw.py")
	if err := os.WriteFile(script, []byte(drawScript), 0o644); err != nil {
		b.Fatal(err)
	}
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{})
	if err != nil {
		b.Fatal(err)
	}
	check := func(res messages.SendResult, tag string) bool {
		return res.WaitReason == messages.WaitStdinRead && res.Screen != nil &&
			strings.Contains(strings.Join(res.Screen.Rows, "\n"), "READY "+tag)
	}
	res, err := sh.Send(ctx, messages.SendRequest{Text: "python3 " + script, Submit: true})
	if err != nil || !check(res, "start") {
		b.Fatalf("start: %+v %v", res, err)
	}
	premature, keys := 0, "abcdefghijklmnop"
	i := 0
	for b.Loop() {
		k := string(keys[i%len(keys)])
		i++
		res, err := sh.Send(ctx, messages.SendRequest{Keys: []string{k}})
		if err != nil {
			b.Fatal(err)
		}
		if !check(res, k) {
			premature++
		}
	}
	b.ReportMetric(float64(premature), "premature")
	if _, err := sh.Send(ctx, messages.SendRequest{Keys: []string{"q"}}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkVimKeyPaired: one keystroke in vim until it is ready for the
// next, through ptyactor (a send with the key: the kernel says when vim
// reads again, and the result carries its screen) against the way tmux
// harnesses do it (send-keys, then capture-pane until the screen changed),
// alternating in one loop. The tmux side guesses nothing here only because
// it knows which change to wait for; the figure to read is the time.
func BenchmarkVimKeyPaired(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not installed")
	}
	svc, o := newService(b, messages.DefaultConfig())
	ctx := context.Background()
	dir := b.TempDir()
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	vim := "vim -u NONE -N -n --cmd 'set ttimeout ttimeoutlen=10' a.txt"
	if res, err := sh.Send(ctx, messages.SendRequest{Text: vim, Submit: true}); err != nil || res.Reader != "vim" {
		b.Fatalf("vim: %+v %v", res, err)
	}
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("new-session", "-d", "-x", "160", "-y", "40", "-c", dir, "env", "TERM=xterm-256color", "vim", "-u", "NONE", "-N", "-n", "--cmd", "set ttimeout ttimeoutlen=10", "b.txt"); err != nil {
		b.Fatalf("tmux: %v %s", err, out)
	}
	defer func() { _, _ = tmux("kill-server") }()
	capture := func() string { s, _ := tmux("capture-pane", "-p"); return s }
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(capture(), "b.txt") {
		if time.Now().After(deadline) {
			b.Fatal("tmux vim did not start")
		}
	}
	// Insert mode in both, then one character per iteration.
	if _, err := sh.Send(ctx, messages.SendRequest{Keys: []string{"i"}}); err != nil {
		b.Fatal(err)
	}
	_, _ = tmux("send-keys", "i")
	var ours, theirs []time.Duration
	n := 0
	for b.Loop() {
		n++
		t0 := time.Now()
		if _, err := sh.Send(ctx, messages.SendRequest{Keys: []string{"x"}}); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))

		want := strings.Repeat("x", n)
		t0 = time.Now()
		_, _ = tmux("send-keys", "x")
		for !strings.HasPrefix(capture(), want+"\n") && !strings.HasPrefix(capture(), want+" ") {
			if time.Since(t0) > 5*time.Second {
				b.Fatalf("tmux: %q not shown", want)
			}
		}
		theirs = append(theirs, time.Since(t0))
	}
	o2, t2 := median(ours), median(theirs)
	b.ReportMetric(float64(o2.Microseconds())/1000, "ptyactor-median-ms")
	b.ReportMetric(float64(t2.Microseconds())/1000, "tmux-median-ms")
}
