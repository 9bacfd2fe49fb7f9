package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ptyactor/ptyactor/record"
)

// build builds ptyrec into a test's temporary folder.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ptyrec")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func intp(i int) *int { return &i }

// writeRecord writes a short closed session to dir; with key, keyed.
func writeRecord(t *testing.T, dir string, key []byte) (string, record.Summary) {
	t.Helper()
	path := filepath.Join(dir, "s.rec")
	w, err := record.NewWriter(path, record.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	evs := []record.Event{
		{Kind: record.KindStart, Rows: 24, Cols: 80, Start: &record.Start{Session: "s", Term: "xterm-256color"}},
		{Kind: record.KindSend, Send: &record.Send{Ticket: 1, Lines: []string{"echo hello"}}},
		{Kind: record.KindInput, Data: "echo hello\r", Source: record.SourceAgent},
		{Kind: record.KindOutput, Data: "echo hello\r\nhello from the record\r\n"},
		{Kind: record.KindSettle, Settle: &record.Settle{Ticket: 1, Reason: "prompt", ExitCode: intp(0), Duration: time.Second}},
		{Kind: record.KindExit, Exit: &record.Exit{Code: intp(0)}},
	}
	for i, ev := range evs {
		ev.Seq, ev.Mono = uint64(i+1), time.Duration(i)*time.Second
		ev.Wall = t0.Add(ev.Mono)
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return path, sum
}

type result struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, stdout.String(), stderr.String()}
}

func TestCommand(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	path, sum := writeRecord(t, dir, nil)

	check := func(r result, code int, in, want string) {
		t.Helper()
		if r.code != code || !strings.Contains(in, want) {
			t.Fatalf("exit %d, want %d; %q does not contain %q\nstdout %s\nstderr %s", r.code, code, in, want, r.stdout, r.stderr)
		}
	}
	r := runBin(t, bin, "verify", path)
	check(r, 0, r.stdout, "ok: 7 records, closed")
	r = runBin(t, bin, "verify", "-expect", sum.SHA256, path)
	check(r, 0, r.stdout, sum.SHA256)
	r = runBin(t, bin, "verify", "-expect", strings.Repeat("0", 64), path)
	check(r, 1, r.stderr, "not at the expected")

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.rec")
	if err := os.WriteFile(cut, b[:len(b)-30], 0o600); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, bin, "verify", cut)
	check(r, 1, r.stderr, "incomplete at record 6")
	flipped := filepath.Join(dir, "flipped.rec")
	f := bytes.Clone(b)
	f[bytes.Index(f, []byte("hello from"))] ^= 0x20
	if err := os.WriteFile(flipped, f, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, bin, "verify", flipped)
	check(r, 1, r.stderr, "corrupt at record 4: hash mismatch")

	// v2 by default (asciinema 2.x refuses v3), v3 by -format.
	r = runBin(t, bin, "export", path)
	check(r, 0, r.stdout, `{"version":2,"width":80,"height":24,`)
	check(r, 0, r.stdout, `"m", "exit 0"]`)
	r = runBin(t, bin, "export", "-format", "asciicast-v3", path)
	check(r, 0, r.stdout, `{"version":3,"term":{"cols":80,"rows":24,"type":"xterm-256color"}`)
	if !strings.HasSuffix(r.stdout, `, "x", "0"]`+"\n") {
		t.Fatalf("the v3 export does not end with the exit event:\n%s", r.stdout)
	}
	out := filepath.Join(dir, "s.cast")
	r = runBin(t, bin, "export", "-format", "asciicast-v2", "-o", out, path)
	check(r, 0, "", "")
	cast, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(bytes.SplitN(cast, []byte("\n"), 2)[0], &h); err != nil || h["version"] != 2.0 {
		t.Fatalf("v2 header %v, %v", h, err)
	}
	r = runBin(t, bin, "export", "-format", "asciicast-v1", path)
	check(r, 2, r.stderr, "unknown -format")
	r = runBin(t, bin, "export", "-o", filepath.Join(dir, "bad.cast"), flipped)
	check(r, 1, r.stderr, "corrupt at record 4")
	if _, err := os.Stat(filepath.Join(dir, "bad.cast")); !os.IsNotExist(err) {
		t.Fatalf("the partial export of a corrupt record stays: %v", err)
	}
	r = runBin(t, bin, "export", cut)
	check(r, 0, r.stderr, "warning")

	r = runBin(t, bin, "cat", path)
	check(r, 0, r.stdout, "echo hello\nhello from the record\n")

	// The screen after event 4 (the output), and at the end; its hash is
	// the emulator's of the same text and cursor.
	r = runBin(t, bin, "screen", "-at", "4", "-json", path)
	var sc struct {
		Seq                  uint64
		Rows, Cols           int
		CursorRow, CursorCol int
		Hash                 string
		Lines                []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &sc); err != nil || r.code != 0 {
		t.Fatalf("screen -json: %+v, %v", r, err)
	}
	if sc.Seq != 4 || sc.Rows != 24 || sc.Cols != 80 || sc.Lines[1] != "hello from the record" || sc.CursorRow != 2 || len(sc.Hash) != 16 {
		t.Fatalf("screen at 4: %+v", sc)
	}
	r = runBin(t, bin, "screen", path)
	check(r, 0, r.stdout, "hello from the record\n")
	check(r, 0, r.stdout, "[screen after event 6: 80x24, cursor 2,0, hash "+sc.Hash+"]")
	r = runBin(t, bin, "screen", "-at", "99", path)
	check(r, 1, r.stderr, "event 99 is not in the record (it holds 1 to 6)")

	r = runBin(t, bin, "-h")
	check(r, 0, r.stderr, "ptyrec export")
	r = runBin(t, bin, "nope")
	check(r, 2, r.stderr, "unknown command")
	r = runBin(t, bin, "verify")
	check(r, 2, r.stderr, "one FILE expected")
}

func TestCommandKeyed(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	key := []byte("a key of more than sixteen bytes")
	path, sum := writeRecord(t, dir, key)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, bin, "verify", "-key", keyFile, "-expect", sum.SHA256, path); r.code != 0 || !strings.Contains(r.stdout, "keyed") {
		t.Fatalf("with the key: %+v", r)
	}
	if r := runBin(t, bin, "verify", path); r.code != 1 || !strings.Contains(r.stderr, "-key FILE") {
		t.Fatalf("without the key: %+v", r)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("another key, just as long"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, bin, "verify", "-key", other, path); r.code != 1 || !strings.Contains(r.stderr, "corrupt at record 1") {
		t.Fatalf("a wrong key: %+v", r)
	}
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, bin, "verify", "-key", keyFile, path); r.code != 1 || !strings.Contains(r.stderr, "group and others") {
		t.Fatalf("a 0644 key file: %+v", r)
	}
}

// TestAsciinemaPlays plays the default export (v2) of a real session's
// record in Debian's asciinema 2.2, under a PTY (asciinema cat wants a
// terminal), when it is installed; the v3 export of the same record ends
// with the exit event, as asciinema 3 writes it.
func TestAsciinemaPlays(t *testing.T) {
	asciinema, err := exec.LookPath("asciinema")
	if err != nil {
		t.Skip("asciinema is not installed")
	}
	bin := build(t)
	dir := t.TempDir()
	path := realSessions(t, filepath.Join(dir, "recordings"), 1)[0]
	cast := filepath.Join(dir, "s.cast")
	if r := runBin(t, bin, "export", "-o", cast, path); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	cmd := exec.Command(asciinema, "cat", cast)
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = out.ReadFrom(ptmx) // EIO when the child exits ends the read
	}()
	werr := cmd.Wait()
	<-done // pty.Start closed our copy of the terminal: the read ends at the child's exit
	if werr != nil || !strings.Contains(out.String(), "session-0") || !strings.Contains(out.String(), "café ✓") {
		t.Fatalf("asciinema cat: %v\n%s", werr, out.String())
	}

	r := runBin(t, bin, "export", "-format", "asciicast-v3", path)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var last [3]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || r.code != 0 {
		t.Fatalf("v3 export: %v\n%s", err, r.stdout)
	}
	status, _ := last[2].(string)
	if _, err := strconv.Atoi(status); last[1] != "x" || err != nil {
		t.Fatalf("the v3 export's last event %v, want the exit event with a numeric status", last)
	}
}
