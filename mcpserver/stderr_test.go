package mcpserver

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// What README says of stderr over stdio: the console's URL is the one
// plain line, among JSON log lines where a client reads stderr (a pipe),
// and the logs are text for a person when stderr is a terminal.
func TestStderrAsREADMESays(t *testing.T) {
	isURL := func(l string) bool {
		return strings.HasPrefix(l, "ptymcp: console (watch the terminals in a browser): http://127.0.0.1:")
	}
	t.Run("a pipe", func(t *testing.T) {
		c, cmd, stderr := stdioServerArgs(t, append(slices.Clone(fastFlags), "-log-level", "info")...)
		c.send(c.open(nil), "echo hi")
		if err := c.cs.Close(); err != nil {
			t.Fatal(err)
		}
		if cmd.ProcessState == nil {
			t.Fatal("ptymcp still runs after its client closed")
		}
		urls, logs := 0, 0
		for _, l := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
			var m map[string]any
			switch {
			case isURL(l):
				urls++
			case json.Unmarshal([]byte(l), &m) == nil && m["level"] != nil && m["message"] != nil:
				logs++
			default:
				t.Errorf("a stderr line neither the console's URL nor a JSON log line: %q", l)
			}
		}
		if urls != 1 || logs == 0 {
			t.Errorf("stderr has %d console URL lines and %d JSON log lines; want one, and logs:\n%s", urls, logs, stderr)
		}
	})
	t.Run("a terminal", func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer ptmx.Close()
		cmd := exec.Command(binary(t), append(slices.Clone(fastFlags), "-log-level", "info")...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = io.Discard
		cmd.Stderr = tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close() // the child's copy is the only one: EIO once it exits
		out := &syncBuf{}
		read := make(chan error, 1)
		go func() {
			_, err := io.Copy(out, ptmx)
			read <- err
		}()
		var waitErr error
		exited := make(chan struct{})
		go func() { waitErr = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { // a failed test leaves no process behind
			_ = cmd.Process.Kill()
			<-exited
		})
		// Once it has started, end stdio: it disposes and exits.
		testkit.WaitFor(t, 30*time.Second, "ptymcp to start", func() bool {
			return strings.Contains(out.String(), "ptymcp starting")
		})
		if err := stdin.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
			if waitErr != nil {
				t.Fatalf("ptymcp: %v", waitErr)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("ptymcp did not exit after its stdin closed")
		}
		if err := <-read; err != nil && !errors.Is(err, syscall.EIO) {
			t.Fatalf("reading the terminal: %v", err)
		}
		// The console writer colours a terminal's lines.
		text := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(strings.ReplaceAll(out.String(), "\r\n", "\n"), "")
		urls, logs := 0, 0
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			switch {
			case isURL(l):
				urls++
			case strings.HasPrefix(l, "{"):
				t.Errorf("a JSON line on a terminal: %q", l)
			case strings.Contains(l, "INF") && strings.Contains(l, "component=ptymcp"):
				logs++
			}
		}
		if urls != 1 || logs == 0 || !strings.Contains(text, "ptymcp starting") {
			t.Errorf("on a terminal: %d URL lines, %d text log lines; want one, and logs:\n%s", urls, logs, text)
		}
	})
}
