package bench

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/creack/pty"
)

// rawPS1 is unique enough never to appear in command output.
const rawPS1 = "RAW-PS1-7f3a> "

// rawShell is the baseline: bash in a PTY, no actors, no parsing, no
// markers; it reads until its unique prompt reappears.
type rawShell struct {
	cmd *exec.Cmd
	f   *os.File
	buf []byte
	acc []byte
}

func startRaw(tb testing.TB, argv ...string) *rawShell {
	tb.Helper()
	if len(argv) == 0 {
		argv = []string{"bash", "--norc", "--noprofile", "-i"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PS1="+rawPS1, "TERM=dumb", "HISTFILE=", "PROMPT_COMMAND=")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		tb.Fatal(err)
	}
	return &rawShell{cmd: cmd, f: f, buf: make([]byte, 64<<10)}
}

// until reads until marker appears in the stream and returns the bytes read.
func (r *rawShell) until(marker string) (int, error) {
	r.acc = r.acc[:0]
	total := 0
	m := []byte(marker)
	for {
		n, err := r.f.Read(r.buf)
		total += n
		r.acc = append(r.acc, r.buf[:n]...)
		// Keep only a tail long enough to match the marker across reads.
		if bytes.Contains(r.acc, m) {
			return total, nil
		}
		if len(r.acc) > len(m) {
			r.acc = append(r.acc[:0], r.acc[len(r.acc)-len(m):]...)
		}
		if err != nil {
			return total, err
		}
	}
}

func (r *rawShell) send(text string) error {
	_, err := r.f.Write([]byte(text + "\r"))
	return err
}

// openRaw times one raw open: start bash until its first prompt (the
// teardown is not timed).
func openRaw(b *testing.B) time.Duration {
	t0 := time.Now()
	r := startRaw(b)
	if _, err := r.until(rawPS1); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	b.StopTimer()
	r.close()
	b.StartTimer()
	return d
}

// roundTrip times one raw send: write text and Enter, read until marker.
func (r *rawShell) roundTrip(b *testing.B, text, marker string) time.Duration {
	t0 := time.Now()
	if err := r.send(text); err != nil {
		b.Fatal(err)
	}
	if _, err := r.until(marker); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func (r *rawShell) close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	_ = r.f.Close()
}
