package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
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
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{local.New(lopts)}})
	o := testkit.Owner(t, svc, "agent")
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
