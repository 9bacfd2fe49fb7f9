package view

// The live view's stream under load and across gaps: a flooded viewer
// jumps to a picture, a viewer resumes from the record, a live watch jumps
// past its window.

import (
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A viewer behind a flood does not stream every byte: it jumps to the
// screen as it is (a picture without scrollback, marked as a gap), and
// still ends at what the terminal shows.
func TestFloodViewerJumps(t *testing.T) {
	s := serve(t)
	stallLikeAPhone(s)
	ctx := testkit.Ctx(t)
	c, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	r.until("$ ")
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "seq 1 300000; echo flood-$((6*7))", Submit: true}); err != nil {
		t.Fatal(err)
	}
	r.until("flood-42")
	gaps := 0
	for _, m := range r.msgs {
		if m["t"] == "picture" && m["gap"] == true {
			gaps++
		}
	}
	if gaps == 0 {
		t.Fatal("the viewer streamed the whole flood; want a jump to the screen")
	}
}

// A viewer away longer than the session keeps events resumes from the
// record: the output after its last number, byte for byte as recorded,
// then the window; no picture, no gap.
func TestResumeFromTheRecord(t *testing.T) {
	s := serveWith(t, local.Options{Record: local.Record{Dir: filepath.Join(t.TempDir(), "records")}})
	ctx := testkit.Ctx(t)
	res, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo away-from-here", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	since := res.Seq
	// More than the window (512 KiB) after it.
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "seq 1 200000 | sed 's/^/line /'; echo back-$((6*7))", Submit: true}); err != nil {
		t.Fatal(err)
	}
	w, err := s.sh.Watch(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for !strings.Contains(got.String(), "back-42") {
		f, err := w.Next(ctx)
		if err != nil || f.Picture != nil {
			t.Fatalf("resume from %d: picture %v, %v; want events", since, f.Picture != nil, err)
		}
		for _, ev := range f.Events {
			if ev.Kind == "o" {
				got.WriteString(ev.Data)
			}
		}
	}
	out := got.String()
	for _, want := range []string{"line 1\r\n", "line 100000\r\n", "line 200000\r\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("resumed output lacks %q (%d bytes)", want, len(out))
		}
	}
	if strings.Count(out, "line 150000\r\n") != 1 {
		t.Fatal("a line came twice or never")
	}
}

// A person's watch (Live, as the pages use) that resumes past the window
// jumps to the screen as it is, with a gap, instead of reading the
// missed output back from the record: a read back decodes the whole
// record, and viewers by the hundred behind a flood starved the session
// on it. The picture the first viewer is handed serves the next ones
// (one drawing, encoded once).
func TestLiveWatchJumpsPastTheWindow(t *testing.T) {
	s := serveWith(t, local.Options{Record: local.Record{Dir: filepath.Join(t.TempDir(), "records")}})
	ctx := testkit.Ctx(t)
	res, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo away-from-here", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "seq 1 200000 | sed 's/^/line /'; echo back-$((6*7))", Submit: true}); err != nil {
		t.Fatal(err)
	}
	w, err := s.sh.Watch(ctx, res.Seq)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.Live().Next(ctx)
	if err != nil || f.Picture == nil || !f.Gap || len(f.Events) != 0 || !strings.Contains(string(f.Picture.Draw), "back-42") {
		t.Fatalf("a live watch resuming past the window: picture %v, gap %v, %d events, %v; want the screen now, with a gap", f.Picture != nil, f.Gap, len(f.Events), err)
	}
	var pm pictureMessages
	a, err := pm.message(f.Picture, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pm.message(f.Picture, true)
	c, _ := pm.message(f.Picture, false)
	if &a[0] != &b[0] || &a[0] == &c[0] || !strings.Contains(string(c), `"gap":false`) {
		t.Fatal("the same picture was encoded again, or a gap mark was shared")
	}
}

// smallBuffers dials with a 16 KiB receive buffer: the window a slow
// phone's socket would advertise.
var smallBuffers = &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	return setBuffer(c, syscall.SO_RCVBUF)
}}

func setBuffer(c syscall.RawConn, opt int) error {
	var serr error
	if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, 16<<10) }); err != nil {
		return err
	}
	return serr
}

// smallSendBuffers accepts with a 16 KiB send buffer, which also turns
// the kernel's buffer autotuning off (up to 4 MiB here).
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if rc, rerr := c.(*net.TCPConn).SyscallConn(); rerr == nil {
		if err := setBuffer(rc, syscall.SO_SNDBUF); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// stallLikeAPhone serves s's view again with small socket buffers on both
// ends. A viewer that stops reading then falls behind the session by
// what it prints past some 100 KiB, on any machine: with the kernel's
// buffers (MiBs) a flood fit in them when the machine was loaded enough
// to slow the shell, and the viewer never fell behind (CI, 2026-12-07).
func stallLikeAPhone(s *served) {
	h := s.srv.Config.Handler
	s.srv.Close()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallSendBuffers{srv.Listener}
	srv.Start()
	s.t.Cleanup(srv.Close)
	s.srv, s.stalled = srv, true
}
