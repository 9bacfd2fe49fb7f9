package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
	"golang.org/x/sys/unix"
)

// realSessions runs n real shells recording into dir, one after the
// other, each printing its number, multibyte text, colour and a long
// listing, and closes them; it returns the records' paths, oldest first.
func realSessions(t *testing.T, dir string, n int) []string {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{
		local.New(local.Options{Record: local.Record{Dir: dir}}),
	}})
	o := testkit.Owner(t, svc, "player")
	ctx := testkit.Ctx(t)
	var paths []string
	for i := range n {
		sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Name: fmt.Sprintf("build-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{
			fmt.Sprintf("echo session-%d", i),
			`printf 'caf\303\251 \342\234\223 \033[1;31mred\033[0m\n'`,
			"seq 1 60",
		} {
			if res, err := sh.Send(ctx, messages.SendRequest{Text: text, Submit: true}); err != nil || res.ExitCode == nil {
				t.Fatalf("%s: %+v, %v", text, res, err)
			}
		}
		report, err := sh.Close(ctx, "done")
		if err != nil || report.Recording == nil {
			t.Fatalf("close: %+v, %v", report, err)
		}
		paths = append(paths, report.Recording.Path)
	}
	return paths
}

// recordOf writes out, as one output event at the size of the record at
// like, into a new record: what a terminal that received out shows, for
// ptyrec cat.
func recordOf(t *testing.T, like, out string) string {
	t.Helper()
	r, err := record.Open(like, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Next()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "played.rec")
	w, err := record.NewWriter(path, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, ev := range []record.Event{
		{Kind: record.KindStart, Rows: first.Rows, Cols: first.Cols, Start: &record.Start{Session: "played"}},
		{Kind: record.KindOutput, Data: out},
	} {
		ev.Seq, ev.Wall = uint64(i+1), now
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLsAndPlay: ptyrec ls lists the records real sessions wrote, newest
// first, verified, with their size and file; ptyrec play of one, without
// pauses, writes what the terminal was sent: a terminal that receives
// it shows the transcript ptyrec cat gives of the record.
func TestLsAndPlay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recordings")
	paths := realSessions(t, dir, 2)
	bin := build(t)

	r := runBin(t, bin, "ls", dir)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "START") || !strings.HasSuffix(lines[0], "FILE") {
		t.Fatalf("ls: %+v", r)
	}
	for i, path := range []string{paths[1], paths[0]} { // newest first
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		l := lines[i+1]
		name := fmt.Sprintf("build-%d", 1-i)
		if !strings.HasSuffix(l, "  "+path) || !strings.Contains(l, "  verified  ") || !strings.Contains(l, "  "+size(fi.Size())+"  ") || !strings.Contains(l, "  "+name+"  player  ") {
			t.Errorf("ls line %d %q: want %s, verified, %s, named %s of player", i+1, l, path, size(fi.Size()), name)
		}
	}

	cat := runBin(t, bin, "cat", paths[0])
	if cat.code != 0 || !strings.Contains(cat.stdout, "\nsession-0\n") || !strings.Contains(cat.stdout, "\ncafé ✓ red\n") || !strings.Contains(cat.stdout, "\n60\n") {
		t.Fatalf("cat: %+v", cat)
	}
	for _, flags := range [][]string{{"-idle-time-limit", "0"}, {"-speed", "1e9"}} {
		play := runBin(t, bin, append(append([]string{"play"}, flags...), paths[0])...)
		if play.code != 0 || play.stderr != "" || !strings.Contains(play.stdout, "\x1b[1;31mred") {
			t.Fatalf("play %v: %+v", flags, play)
		}
		shown := runBin(t, bin, "cat", recordOf(t, paths[0], play.stdout))
		if shown.stdout != cat.stdout {
			t.Errorf("play %v: the terminal shows\n%s\nptyrec cat gives\n%s", flags, shown.stdout, cat.stdout)
		}
	}
}

// TestLsDefaultFolder: without DIR, ls reads the folder ptymcp records
// into by default (ptyactor/recordings under XDG_STATE_HOME); a folder
// that is not there is an error that says so; an empty one says so too.
func TestLsDefaultFolder(t *testing.T) {
	bin := build(t)
	state := t.TempDir()
	dir := filepath.Join(state, "ptyactor", "recordings")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path, _ := writeRecord(t, dir, nil)
	ls := func(args ...string) result {
		cmd := exec.Command(bin, append([]string{"ls"}, args...)...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "TZ=UTC")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
	}
	r := ls()
	// writeRecord's session started 2026-12-02 16:00:00 UTC and ran 5 s.
	if r.code != 0 || !strings.Contains(r.stdout, "2026-12-02 16:00:00  5s  ") || !strings.HasSuffix(r.stdout, "  "+path+"\n") {
		t.Fatalf("ls: %+v", r)
	}
	r = ls(filepath.Join(state, "nope"))
	if r.code != 1 || !strings.Contains(r.stderr, "no such records folder") {
		t.Fatalf("ls of a missing folder: %+v", r)
	}
	empty := t.TempDir()
	if r = ls(empty); r.code != 0 || r.stdout != "no records in "+empty+"\n" {
		t.Fatalf("ls of an empty folder: %+v", r)
	}
}

// TestPlayKeys plays, with stdin a terminal, a record whose outputs are an
// hour apart: space pauses, "." then plays the next output at once (only
// a paused player takes it), and Ctrl-C quits, the terminal's mode put
// back.
func TestPlayKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slow.rec")
	w, err := record.NewWriter(path, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i, ev := range []record.Event{
		{Kind: record.KindStart, Rows: 24, Cols: 80, Start: &record.Start{Session: "slow"}},
		{Kind: record.KindOutput, Data: "first\r\n"},
		{Kind: record.KindOutput, Data: "second\r\n", Mono: time.Hour},
		{Kind: record.KindOutput, Data: "third\r\n", Mono: 2 * time.Hour},
	} {
		ev.Seq, ev.Wall = uint64(i+1), t0.Add(ev.Mono)
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bin := build(t)
	cmd := exec.Command(bin, "play", path)
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = out.ReadFrom(ptmx)
	}()
	waitOut := func(want string) {
		t.Helper()
		testkit.WaitFor(t, 30*time.Second, "play to show "+want, func() bool { return strings.Contains(out.String(), want) })
	}
	waitOut("first")
	// The player reads keys once it set the terminal's mode: echo off.
	testkit.WaitFor(t, 30*time.Second, "echo off", func() bool {
		tio, err := unix.IoctlGetTermios(int(ptmx.Fd()), ioctlGetTermios)
		return err == nil && tio.Lflag&unix.ECHO == 0
	})
	if _, err := ptmx.Write([]byte(" .")); err != nil {
		t.Fatal(err)
	}
	waitOut("second")
	if strings.Contains(out.String(), "third") {
		t.Fatalf("a step played two outputs: %q", out.String())
	}
	if _, err := ptmx.Write([]byte{3}); err != nil { // Ctrl-C: SIGINT from the terminal
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if werr != nil {
		t.Fatalf("play after Ctrl-C: %v\n%q", werr, out.String())
	}
	tio, err := unix.IoctlGetTermios(int(ptmx.Fd()), ioctlGetTermios)
	if err != nil || tio.Lflag&(unix.ECHO|unix.ICANON) != unix.ECHO|unix.ICANON {
		t.Fatalf("the terminal's mode after play: %+v, %v", tio, err)
	}
	ptmx.Close()
	<-done
	if strings.Contains(out.String(), "third") {
		t.Fatalf("play went on after Ctrl-C: %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer one goroutine fills while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// ReadFrom copies r into the buffer until r ends (EIO when a PTY's child
// exits).
func (s *syncBuffer) ReadFrom(r interface{ Read([]byte) (int, error) }) (int64, error) {
	buf := make([]byte, 4096)
	var total int64
	for {
		n, err := r.Read(buf)
		s.mu.Lock()
		s.b.Write(buf[:n])
		s.mu.Unlock()
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPlayCut: a record whose oldest segments were cut plays from its
// checkpoint's screen: what a terminal shows after the play is what
// ptyrec cat gives of the record, which replays from the same screen.
func TestPlayCut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.rec")
	w, err := record.NewWriter(path, record.Options{MaxBytes: 4 << 10, SegmentBytes: 1 << 10, Screens: true})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	evs := []record.Event{{Kind: record.KindStart, Rows: 5, Cols: 40, Start: &record.Start{Session: "long"}}}
	for i := range 200 {
		evs = append(evs, record.Event{Kind: record.KindOutput, Data: fmt.Sprintf("line %d\r\n", i)})
	}
	for i, ev := range evs {
		ev.Seq, ev.Mono = uint64(i+1), time.Duration(i)*time.Millisecond
		ev.Wall = t0.Add(ev.Mono)
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
		// The screen after line i: lines i-3 to i, and the cursor below.
		if w.Flush(testkit.Ctx(t)) == nil && w.WantsScreen() {
			var screen []string
			for j := max(i-4, 0); j < i; j++ {
				screen = append(screen, fmt.Sprintf("line %d", j))
			}
			for len(screen) < 5 {
				screen = append(screen, "")
			}
			cp := &record.Checkpoint{Screen: screen, Cursor: [2]int{min(i, 4), 0}}
			if err := w.Append(record.Event{Kind: record.KindCheckpoint, Checkpoint: cp}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("nothing was cut: %v", err)
	}
	bin := build(t)
	cat := runBin(t, bin, "cat", path)
	play := runBin(t, bin, "play", "-idle-time-limit", "0", path)
	if cat.code != 0 || play.code != 0 || !strings.HasSuffix(cat.stdout, "line 199\n\n") {
		t.Fatalf("cat %+v\nplay %+v", cat, play)
	}
	if shown := runBin(t, bin, "cat", recordOf(t, path, play.stdout)); shown.stdout != cat.stdout {
		t.Fatalf("after the play the terminal shows\n%s\nptyrec cat gives\n%s", shown.stdout, cat.stdout)
	}
}
