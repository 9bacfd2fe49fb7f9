package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/fixture"
	"github.com/ptyactor/ptyactor/test/testkit"
)

const opToken = "operator-token-for-tests-0123456789"

// served is a view server over a real service with one shell.
type served struct {
	t     *testing.T
	srv   *httptest.Server
	svc   *actors.Service
	sh    *actors.Session
	owner messages.Owner
	links *Links
	// now is the links' clock: the sockets' guards read it while the
	// test moves it.
	nowMu sync.Mutex
	now   time.Time
	// stalled: the sockets' buffers are small (stallLikeAPhone), so a
	// viewer that does not read falls behind by what the session prints,
	// not by what the kernel would buffer for it.
	stalled bool
}

func (s *served) clock() time.Time { s.nowMu.Lock(); defer s.nowMu.Unlock(); return s.now }

func (s *served) advance(d time.Duration) { s.nowMu.Lock(); s.now = s.now.Add(d); s.nowMu.Unlock() }

func serve(t *testing.T) *served { return serveWith(t, local.Options{}) }

func serveWith(t *testing.T, lopts local.Options, edit ...func(*Options)) *served {
	t.Helper()
	svc := fixture.Service(t, fixture.Options{Backends: []backend.Backend{local.New(lopts)}})
	o := fixture.Owner(t, svc, "agent")
	sh, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{Name: "build"})
	if err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, svc: svc, sh: sh, owner: o, now: time.Now()}
	s.links = NewLinks(s.clock)
	opts := Options{
		Source: ServiceSource(svc), OperatorToken: opToken, Links: s.links,
		Assets: fstest.MapFS{"console.html": {Data: []byte("console")}, "view.html": {Data: []byte("view")}},
	}
	for _, e := range edit {
		e(&opts)
	}
	v, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.srv = httptest.NewServer(v)
	t.Cleanup(s.srv.Close)
	return s
}

// dial opens the live view's socket as a page of the server's origin
// (or origin) with the operator's bearer (or none) and says hello.
func (s *served) dial(origin string, bearer bool, h hello) (*websocket.Conn, error) {
	hdr := http.Header{"Origin": {origin}}
	if bearer {
		hdr.Set("Authorization", "Bearer "+opToken)
	}
	url := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/api/watch/" + string(s.sh.ID())
	opts := &websocket.DialOptions{HTTPHeader: hdr}
	if s.stalled {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: smallBuffers.DialContext}}
	}
	c, _, err := websocket.Dial(testkit.Ctx(s.t), url, opts)
	if err != nil {
		return nil, err
	}
	s.t.Cleanup(func() { c.CloseNow() })
	// A page reads messages of any size; an output message is up to
	// 8+frameBytes (more when one read was larger), past the client's
	// default limit of 32 KiB.
	c.SetReadLimit(1 << 24)
	h.T = "hello"
	b, _ := json.Marshal(h)
	if err := c.Write(testkit.Ctx(s.t), websocket.MessageText, b); err != nil {
		return nil, err
	}
	return c, nil
}

// reader collects what a view's socket delivers.
type reader struct {
	t      *testing.T
	c      *websocket.Conn
	msgs   []map[string]any
	screen bytes.Buffer // the picture's drawing, then the output
	seq    uint64
}

// next reads one message; output is appended to screen.
func (r *reader) next(ctx context.Context) (map[string]any, error) {
	typ, b, err := r.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ == websocket.MessageBinary {
		r.seq = binary.BigEndian.Uint64(b[:8])
		r.screen.Write(b[8:])
		return map[string]any{"t": "out"}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatal(err)
	}
	r.msgs = append(r.msgs, m)
	if m["t"] == "picture" {
		r.screen.Reset()
		r.screen.WriteString(m["data"].(string))
		r.seq = uint64(m["seq"].(float64))
	}
	return m, nil
}

// message reads until a message (after those already read) satisfies ok.
func (r *reader) message(what string, ok func(m map[string]any) bool) map[string]any {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Ctx(r.t), 10*time.Second)
	defer cancel()
	for {
		m, err := r.next(ctx)
		if err != nil {
			r.t.Fatalf("waiting for %s: %v; have %v", what, err, r.msgs)
		}
		if ok(m) {
			return m
		}
	}
}

// control reads until a control message with this holder, for this page
// (you) or not.
func (r *reader) control(holder string, you bool) map[string]any {
	r.t.Helper()
	return r.message(fmt.Sprintf("control %s (you %v)", holder, you), func(m map[string]any) bool {
		return m["t"] == "control" && m["holder"] == holder && m["you"] == you
	})
}

// refused reads until a refusal with code.
func (r *reader) refused(code string) map[string]any {
	r.t.Helper()
	return r.message("refused "+code, func(m map[string]any) bool { return m["t"] == "refused" && m["code"] == code })
}

// write sends the page message m.
func (r *reader) write(m map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(m)
	if err := r.c.Write(testkit.Ctx(r.t), websocket.MessageText, b); err != nil {
		r.t.Fatal(err)
	}
}

// until reads until the output holds want.
func (r *reader) until(want string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Ctx(r.t), 10*time.Second)
	defer cancel()
	for !strings.Contains(r.screen.String(), want) {
		if _, err := r.next(ctx); err != nil {
			r.t.Fatalf("waiting for %q: %v; have %q", want, err, r.screen.String())
		}
	}
}

// An operator's view: a picture of what the terminal shows, then what it
// prints next, byte for byte; input without a take is refused; the state badge
// comes; a reconnect from the last number resumes with nothing lost or
// doubled.
func TestOperatorWatches(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo before-watch", Submit: true}); err != nil {
		t.Fatal(err)
	}
	c, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	hi, err := r.next(ctx)
	if err != nil || hi["t"] != "hello" || hi["readOnly"] != false || hi["name"] != "build" {
		t.Fatalf("hello %v, %v", hi, err)
	}
	r.until("before-watch")
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo after-$((6*7))", Submit: true}); err != nil {
		t.Fatal(err)
	}
	r.until("after-42")
	c.Write(ctx, websocket.MessageText, []byte(`{"t":"input","data":"rm -rf /\r"}`))
	for !hasRefusal(r.msgs, "not_holding") {
		if _, err := r.next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Output while away, then a resume from the last number: exactly
	// what the stream holds after it.
	since := r.seq
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo while-away", Submit: true}); err != nil {
		t.Fatal(err)
	}
	c2, err := s.dial(s.srv.URL, true, hello{Since: since})
	if err != nil {
		t.Fatal(err)
	}
	r2 := &reader{t: t, c: c2}
	r2.until("while-away")
	w, err := s.sh.Watch(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for want.Len() < r2.screen.Len() {
		f, err := w.Next(ctx)
		if err != nil || f.Picture != nil {
			t.Fatalf("stream after %d: %+v, %v", since, f, err)
		}
		for _, ev := range f.Events {
			if ev.Kind == "o" && ev.Seq <= r2.seq {
				want.WriteString(ev.Data)
			}
		}
	}
	if got := r2.screen.String(); got != want.String() {
		t.Fatalf("resumed output differs from the stream:\n got %q\nwant %q", got, want.String())
	}
	for _, m := range r2.msgs {
		if m["t"] == "picture" {
			t.Fatalf("a resume inside the window sent a picture: %v", m)
		}
	}
}

func hasControl(msgs []map[string]any, holder string, you bool) bool {
	for _, m := range msgs {
		if m["t"] == "control" && m["holder"] == holder && m["you"] == you {
			return true
		}
	}
	return false
}

func hasRefusal(msgs []map[string]any, code string) bool {
	for _, m := range msgs {
		if m["t"] == "refused" && m["code"] == code {
			return true
		}
	}
	return false
}

// Share links: one opens its session's view; an expired, a revoked, a
// wrong or a missing token, and another session's, are refused alike.
func TestShareLinks(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	link, err := s.links.Share(s.owner, s.sh.ID(), "build for ana", 0)
	if err != nil || len(link.Token) < 22 || !link.Expires.After(s.clock()) {
		t.Fatalf("share: %+v, %v", link, err)
	}
	c, err := s.dial(s.srv.URL, false, hello{Token: link.Token})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	hi, err := r.next(ctx)
	if err != nil || hi["t"] != "hello" || hi["label"] != "build for ana" {
		t.Fatalf("hello over a link: %v, %v", hi, err)
	}
	other, err := s.links.Share(s.owner, "another-session", "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(why, token string) {
		t.Helper()
		c, err := s.dial(s.srv.URL, false, hello{Token: token})
		if err != nil {
			t.Fatalf("%s: dial: %v", why, err)
		}
		r := &reader{t: t, c: c}
		m, err := r.next(ctx)
		if err != nil || m["t"] != "error" || m["code"] != "forbidden" {
			t.Fatalf("%s: %v, %v; want forbidden", why, m, err)
		}
		if _, err := r.next(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("%s: then %v, want the socket closed", why, err)
		}
	}
	refused("no token", "")
	refused("a wrong token", strings.Repeat("A", 22))
	refused("another session's token", other.Token)
	s.advance(2 * time.Hour)
	refused("an expired token", link.Token)
	s.advance(-2 * time.Hour)
	if n := s.links.Unshare(s.sh.ID()); n != 1 {
		t.Fatalf("unshare revoked %d links, want 1", n)
	}
	refused("a revoked token", link.Token)
	if _, err := s.links.Share(s.owner, s.sh.ID(), "", 0); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("an empty label: %v", err)
	}
}

// A page of another origin can neither call the API nor open the socket,
// and nothing is served without a login.
func TestOriginAndLogin(t *testing.T) {
	s := serve(t)
	if _, err := s.dial("https://evil.example", true, hello{}); err == nil {
		t.Fatal("a WebSocket from another origin was accepted")
	}
	get := func(path, origin string, cookie *http.Cookie) int {
		req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := get("/api/sessions", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("sessions without a login: %d", code)
	}
	login := func(token, origin string) *http.Response {
		req, _ := http.NewRequest("POST", s.srv.URL+"/api/login", strings.NewReader(`{"token":"`+token+`"}`))
		req.Header.Set("Origin", origin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := login(opToken, "https://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a login from another origin: %d", res.StatusCode)
	}
	if res := login("wrong", s.srv.URL); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", res.StatusCode)
	}
	res := login(opToken, s.srv.URL)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusNoContent || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookie %+v", res.StatusCode, cookie)
	}
	if code := get("/api/sessions", s.srv.URL, cookie); code != http.StatusOK {
		t.Fatalf("sessions with the cookie: %d", code)
	}
	if code := get("/api/sessions", "https://evil.example", cookie); code != http.StatusForbidden {
		t.Fatalf("sessions from another origin with the cookie: %d", code)
	}
}

// The console lists the session with the kernel's badge: waiting for
// input while a program reads the terminal, secret while getpass reads,
// running while a command runs.
func TestConsoleBadges(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	badge := func() (string, string) {
		req, _ := http.NewRequest("GET", s.srv.URL+"/api/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+opToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var list []sessionJSON
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list) != 1 {
			t.Fatalf("sessions: %v, %v", list, err)
		}
		return list[0].Badge, list[0].Reader
	}
	waitBadge := func(want, reader string) {
		t.Helper()
		var b, r string
		testkit.WaitFor(t, 10*time.Second, "badge "+want, func() bool {
			b, r = badge()
			return b == want && (reader == "" || r == reader)
		})
		_ = b
	}
	waitBadge("prompt", "bash")
	op, err := s.sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	waitBadge("running", "")
	op.Cancel()
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "cat", Submit: true}); err != nil {
		t.Fatal(err)
	}
	waitBadge("waiting", "cat")
	// ^C as a person types it: the send settles at the shell's prompt.
	if res, err := s.sh.Send(ctx, messages.SendRequest{Keys: []string{"Ctrl-C"}}); err != nil || res.Cause != messages.CausePrompt {
		t.Fatalf("^C: %+v, %v", res, err)
	}
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: `python3 -c "import getpass; getpass.getpass('pw: ')"`, Submit: true}); err != nil {
		t.Fatal(err)
	}
	waitBadge("secret", "")
	if _, r := badge(); r != "python3" {
		t.Fatalf("secret prompt read by %q, want python3", r)
	}
}

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

// Taking over through the socket: an operator's take settles the agent's
// send in flight (after a SIGINT when asked) and refuses the agent's
// sends; the page's input runs; a second page's take makes the first
// one's input stale, never written; a hand back lets the agent send
// again, its result carrying what the person did, and the returned
// page's input is stale; a share link's page cannot take.
func TestTakeOver(t *testing.T) {
	s := serve(t)
	ctx := testkit.Ctx(t)
	c1, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r1 := &reader{t: t, c: c1}
	r1.control(messages.AgentHolder, false)
	r1.until("$ ")

	op, err := s.sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30; echo slept-$((6*7))", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	r1.until("sleep 30")
	r1.write(map[string]any{"t": "take", "interrupt": true})
	m := r1.control(messages.OperatorHolder, true)
	if m["person"] != true || m["since"] == nil || m["idleLeftMs"].(float64) <= 0 || m["epoch"].(float64) < 1 {
		t.Fatalf("control after the take: %v", m)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	res, err := op.Result(rctx)
	cancel()
	if err != nil || res.Cause != messages.CauseTakenOver {
		t.Fatalf("the send in flight: %+v, %v; want cause %s within a second", res, err, messages.CauseTakenOver)
	}
	if _, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo agent", Submit: true}); !errors.Is(err, messages.ErrControlHeld) {
		t.Fatalf("an agent's send while the operator holds control: %v, want %v", err, messages.ErrControlHeld)
	}
	r1.write(map[string]any{"t": "input", "data": "echo typed-$((6*7))\r"})
	r1.until("typed-42")
	if strings.Contains(r1.screen.String(), "slept-42") {
		t.Fatal("the interrupted command went on")
	}

	// A second page takes over: the first one's input is stale.
	c2, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r2 := &reader{t: t, c: c2}
	r2.control(messages.OperatorHolder, false)
	n := len(r1.msgs)
	r2.write(map[string]any{"t": "take"})
	r2.control(messages.OperatorHolder, true)
	r1.write(map[string]any{"t": "input", "data": "echo stale-$((6*7))\r"})
	r1.refused("control_stale")
	if !hasControl(r1.msgs[n:], messages.OperatorHolder, false) { // the badge loop may have told it first
		r1.control(messages.OperatorHolder, false)
	}
	r2.write(map[string]any{"t": "resize", "rows": 30, "cols": 100})
	r2.message("resize 30x100", func(m map[string]any) bool { return m["t"] == "resize" && m["rows"] == 30.0 && m["cols"] == 100.0 })
	r2.write(map[string]any{"t": "input", "data": "echo second-$((6*7))\r"})
	r2.until("second-42")
	if strings.Contains(r2.screen.String(), "stale-") {
		t.Fatalf("a stale page's input was written: %q", r2.screen.String())
	}

	// Hand back: the agent sends again, and hears what happened.
	r2.write(map[string]any{"t": "return"})
	r2.control(messages.AgentHolder, false)
	r2.write(map[string]any{"t": "input", "data": "echo returned-$((6*7))\r"})
	r2.refused("control_stale")
	res, err = s.sh.Send(ctx, messages.SendRequest{Text: "echo agent-$((6*7))", Submit: true})
	if err != nil || !strings.Contains(res.Viewport, "agent-42") {
		t.Fatalf("the agent's send after the hand back: %+v, %v", res, err)
	}
	if h := res.Handback; h == nil || h.Reason != messages.HandbackReturned || len(h.Lines) == 0 {
		t.Fatalf("the agent's first result after the hand back carries %+v; want what the people typed", h)
	}
	if strings.Contains(r2.screen.String(), "returned-") {
		t.Fatal("a returned page's input was written")
	}

	// A share link's page cannot take.
	link, err := s.links.Share(s.owner, s.sh.ID(), "ana", 0)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := s.dial(s.srv.URL, false, hello{Token: link.Token})
	if err != nil {
		t.Fatal(err)
	}
	r3 := &reader{t: t, c: c3}
	if hi, err := r3.next(ctx); err != nil || hi["readOnly"] != true {
		t.Fatalf("a share link's hello: %v, %v", hi, err)
	}
	r3.write(map[string]any{"t": "take"})
	r3.refused("read_only")
	r3.write(map[string]any{"t": "input", "data": "echo shared\r"})
	r3.refused("read_only")
}

// A hold without input ends by itself after Options.ControlIdle: the
// page is told the agent holds control again, and the agent sends.
func TestTakeOverIdle(t *testing.T) {
	s := serveWith(t, local.Options{}, func(o *Options) { o.ControlIdle = time.Second })
	ctx := testkit.Ctx(t)
	c, err := s.dial(s.srv.URL, true, hello{})
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, c: c}
	r.control(messages.AgentHolder, false)
	r.write(map[string]any{"t": "take"})
	m := r.control(messages.OperatorHolder, true)
	if left := m["idleLeftMs"].(float64); left <= 0 || left > 1000 || m["idleTimeoutMs"] != 1000.0 {
		t.Fatalf("control after the take: %v; want about a second left", m)
	}
	r.control(messages.AgentHolder, false)
	res, err := s.sh.Send(ctx, messages.SendRequest{Text: "echo back-$((6*7))", Submit: true})
	if err != nil || !strings.Contains(res.Viewport, "back-42") {
		t.Fatalf("the agent's send after the idle hand back: %+v, %v", res, err)
	}
	if h := res.Handback; h == nil || h.Reason != messages.HandbackIdle {
		t.Fatalf("the hand back: %+v, want reason %s", h, messages.HandbackIdle)
	}
}
