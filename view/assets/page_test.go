package assets_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/view/assets"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "PA_ASSETS_RUN", func(*testkit.LeakChecker) {}))
}

const wait = 10 * time.Second

// fake is the server side of the pages, as little as they need: the
// assets, the pages at their paths, a login, a session list, and a watch
// socket whose every message the test sends by hand. It records every
// request URL it saw, and sends csp with every answer.
type fake struct {
	*httptest.Server
	t     *testing.T
	conns chan *watch

	mu       sync.Mutex
	urls     []string
	logins   []string
	sessions string // what /api/sessions answers: sessionsJSON unless a test sets it

	stop     chan struct{}
	handlers sync.WaitGroup
}

// watch is one watch socket, after the page's hello.
type watch struct {
	id    string
	hello struct {
		T     string  `json:"t"`
		Since int64   `json:"since"`
		Token *string `json:"token"`
	}
	c   *websocket.Conn
	ctx context.Context // done when the page closed the socket
	in  chan map[string]any
}

// recv waits for the page's next message.
func (wc *watch) recv(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-wc.in:
		return m
	case <-time.After(wait):
		t.Fatal("the page sent nothing")
		return nil
	}
}

// csp is the strictest policy the pages work under, which the view
// server can send: scripts only from the server (the pages have no inline
// script), and inline styles, which xterm's DOM renderer needs for its
// theme and cell sizes.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const sessionsJSON = `[
 {"id":"s1","name":"build","owner":"agent-a","host":"local","cwd":"/work/app","program":"make","badge":"running","idleMs":3000,
  "control":{"holder":"operator","person":true,"since":"2026-01-02T03:04:05Z"}},
 {"id":"s2","name":"editor","owner":"agent-b","host":"gpu-1","cwd":"/home/dev","program":"vim","badge":"waiting","reader":"vim","idleMs":125000}
]`

func newFake(t *testing.T) *fake {
	f := &fake{t: t, conns: make(chan *watch, 4), stop: make(chan struct{}), sessions: sessionsJSON}
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := fs.ReadFile(assets.FS(), name)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(b)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets.FS())))
	mux.HandleFunc("GET /{$}", page("console.html"))
	mux.HandleFunc("GET /s/{id}", page("view.html"))
	mux.HandleFunc("GET /v/{id}", page("view.html"))
	mux.HandleFunc("POST /api/login", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Token string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f.mu.Lock()
		f.logins = append(f.logins, body.Token)
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "ptyview", Value: "ok", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /api/sessions", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("ptyview"); err != nil || c.Value != "ok" {
			http.Error(w, "log in", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		list := f.sessions
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(list))
	})
	mux.HandleFunc("GET /api/watch/{id}", f.watch)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.urls = append(f.urls, r.RequestURI)
		f.mu.Unlock()
		w.Header().Set("Content-Security-Policy", csp)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(f.stop)
		f.Close()
		f.handlers.Wait() // a hijacked socket's handler is not waited for by Close
	})
	return f
}

func (f *fake) watch(w http.ResponseWriter, r *http.Request) {
	f.handlers.Add(1)
	defer f.handlers.Done()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	wc := &watch{id: r.PathValue("id"), c: c, in: make(chan map[string]any, 256)}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	err = wsjson.Read(ctx, c, &wc.hello)
	cancel()
	if err != nil {
		f.t.Errorf("watch %s: read hello: %v", wc.id, err)
		return
	}
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	wc.ctx = rctx
	go func() {
		select {
		case <-f.stop:
			rcancel()
		case <-rctx.Done():
		}
	}()
	f.conns <- wc
	// What the page sends after its hello (a take over's messages).
	for {
		var m map[string]any
		if err := wsjson.Read(rctx, c, &m); err != nil {
			return
		}
		select {
		case wc.in <- m:
		default:
			f.t.Errorf("watch %s: the page sent more than the test reads: %v", wc.id, m)
		}
	}
}

// next waits for the page's next watch socket.
func (f *fake) next() *watch {
	f.t.Helper()
	select {
	case wc := <-f.conns:
		return wc
	case <-time.After(wait):
		f.t.Fatal("the page did not open a watch socket")
		return nil
	}
}

// none fails the test if the page opens a watch socket within d (its first
// reconnect would come after 250 ms).
func (f *fake) none(d time.Duration) {
	f.t.Helper()
	select {
	case wc := <-f.conns:
		f.t.Fatalf("the page reconnected (since %d) after it was told to stop", wc.hello.Since)
	case <-time.After(d):
	}
}

// send writes one message, given as JSON, to the page.
func (wc *watch) send(t *testing.T, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := wc.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("send %s: %v", msg, err)
	}
}

// out writes output as the server does: a binary message, the event's
// number (8 bytes, big-endian), then the bytes.
func (wc *watch) out(t *testing.T, seq uint64, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	b := binary.BigEndian.AppendUint64(nil, seq)
	if err := wc.c.Write(ctx, websocket.MessageBinary, append(b, data...)); err != nil {
		t.Fatalf("out %d: %v", seq, err)
	}
}

// sendJSON writes v as JSON (for messages whose data holds escapes).
func (wc *watch) sendJSON(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	wc.send(t, string(b))
}

// screenshots is where pages are photographed: $PTYACTOR_SCREENSHOTS
// when set (to keep them for the docs), else a temporary folder.
func screenshots(t *testing.T) string {
	if d := os.Getenv("PTYACTOR_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// cell is how xterm's DOM renderer drew a run of text.
type cell struct {
	Class, Color, Background string
}

// cellJS finds the span whose text is exactly the argument.
const cellJS = `((text) => {
	const s = [...document.querySelectorAll(".xterm-rows span")].find((s) => s.textContent === text);
	if (!s) return null;
	const cs = getComputedStyle(s);
	return { class: s.className, color: cs.color, background: cs.backgroundColor };
})`

// withinCSP fails t if the page broke the fake's Content-Security-Policy.
func withinCSP(t *testing.T, b *testkit.Browser) {
	t.Helper()
	for _, m := range b.Console() {
		if strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("the page broke the policy %q: %s", csp, m.Text)
		}
	}
}

func (f *fake) requested() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.urls...)
}
