package assets_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/ptyactor/ptyactor/test/browser"
	"github.com/ptyactor/ptyactor/test/leakcheck"
	"github.com/ptyactor/ptyactor/view/assets"
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "PA_ASSETS_RUN", func(*leakcheck.Checker) {}))
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

func TestViewPage(t *testing.T) {
	f := newFake(t)
	b := browser.New(t)
	b.Open(f.URL + "/s/s1")

	c1 := f.next()
	if c1.id != "s1" || c1.hello.T != "hello" || c1.hello.Since != 0 || c1.hello.Token != nil {
		t.Fatalf("first hello: id %q %+v, want s1, since 0, no token", c1.id, c1.hello)
	}
	c1.send(t, `{"t":"hello","id":"s1","name":"build","label":"build","readOnly":true}`)
	c1.send(t, `{"t":"state","badge":"running"}`)
	c1.sendJSON(t, map[string]any{"t": "picture", "seq": 3, "rows": 10, "cols": 40, "gap": false,
		"data": "hello world\r\n\x1b[7mINV\x1b[0m \x1b[31mRED\x1b[0m \x1b[38;5;196mR196\x1b[0m"})

	rows := `document.querySelector(".xterm-rows").textContent`
	b.WaitJS(rows+`.includes("hello world")`, wait)
	b.WaitJS(`ptyView.term.cols === 40 && ptyView.term.rows === 10 && ptyView.seq === 3`, wait)
	b.WaitJS(`document.getElementById("title").textContent === "build" && document.title.startsWith("build")`, wait)
	b.WaitJS(`document.getElementById("badge").textContent === "running" && ptyView.badge === "running"`, wait)
	var connected bool
	b.Eval(`ptyView.connected`, &connected)
	if !connected {
		t.Error("ptyView.connected is false on a live socket")
	}

	// Reverse video and colours, as the DOM renderer draws them: the
	// palette classes, and the colours the browser computed.
	var inv, red, red196 *cell
	b.Eval(cellJS+`("INV")`, &inv)
	b.Eval(cellJS+`("RED")`, &red)
	b.Eval(cellJS+`("R196")`, &red196)
	if inv == nil || red == nil || red196 == nil {
		var html string
		b.Eval(`document.querySelector(".xterm-rows").innerHTML`, &html)
		t.Fatalf("a styled run is not a span of its own: inv %v red %v 196 %v\n%s", inv, red, red196, html)
	}
	t.Logf("inverse %+v; red %+v; 196 %+v", *inv, *red, *red196)
	// The theme is foreground #d8dee4 on #101214: reversed, the cell is
	// drawn in the background colour on the foreground colour.
	// xterm marks the default colours swapped as palette entry 257.
	if !strings.Contains(inv.Class, "xterm-bg-257") || inv.Background != "rgb(216, 222, 228)" || inv.Color != "rgb(16, 18, 20)" {
		t.Errorf("reverse video cell: class %q, colour %s on %s, want xterm-bg-257, rgb(16, 18, 20) on rgb(216, 222, 228)", inv.Class, inv.Color, inv.Background)
	}
	if !strings.Contains(red.Class, "xterm-fg-1") || red.Color != "rgb(204, 0, 0)" {
		t.Errorf("SGR 31 cell: class %q colour %s, want xterm-fg-1, rgb(204, 0, 0) (xterm 6's red)", red.Class, red.Color)
	}
	if !strings.Contains(red196.Class, "xterm-fg-196") || red196.Color != "rgb(255, 0, 0)" {
		t.Errorf("SGR 38;5;196 cell: class %q colour %s, want xterm-fg-196, rgb(255, 0, 0)", red196.Class, red196.Color)
	}

	// The terminal is letterboxed: drawn in the font that fits the stage,
	// at its top, never resized.
	b.WaitJS(fittedJS, wait)
	var fits bool
	b.Eval(`(() => {
		const t = document.getElementById("term").getBoundingClientRect();
		const s = document.getElementById("stage").getBoundingClientRect();
		return t.width > 0 && t.left >= s.left - 1 && t.right <= s.right + 1 && Math.abs(t.top - s.top) < 1 && t.bottom <= s.bottom + 1;
	})()`, &fits)
	if !fits {
		t.Error("the terminal is not inside the stage, at its top")
	}

	c1.out(t, 4, "\r\nmore output")
	b.WaitJS(rows+`.includes("more output") && ptyView.seq === 4`, wait)
	c1.send(t, `{"t":"resize","seq":5,"rows":12,"cols":50}`)
	b.WaitJS(`ptyView.term.cols === 50 && ptyView.term.rows === 12 && ptyView.seq === 5`, wait)
	c1.send(t, `{"t":"state","badge":"waiting","reader":"vim"}`)
	b.WaitJS(`document.getElementById("badge").textContent === "waiting for input: vim"`, wait)
	b.Screenshot(filepath.Join(screenshots(t), "view.png"))

	// The server drops the socket: the page comes back asking for what
	// follows seq 5, and drops an event it already has.
	if err := c1.c.Close(websocket.StatusGoingAway, "restart"); err != nil {
		t.Fatalf("close: %v", err)
	}
	c2 := f.next()
	if c2.hello.Since != 5 {
		t.Fatalf("reconnect: since %d, want 5 (the last seq the page got)", c2.hello.Since)
	}
	c2.send(t, `{"t":"hello","id":"s1","name":"build","label":"build","readOnly":true}`)
	c2.out(t, 5, "DOUBLED")
	c2.out(t, 6, " after reconnect")
	b.WaitJS(rows+`.includes("after reconnect") && ptyView.seq === 6 && ptyView.connected`, wait)
	var text string
	b.Eval(rows, &text)
	if strings.Contains(text, "DOUBLED") || strings.Count(text, "more output") != 1 {
		t.Errorf("after the reconnect the screen has a doubled event: %q", text)
	}

	// A picture with a gap redraws the screen and says output was skipped.
	c2.sendJSON(t, map[string]any{"t": "picture", "seq": 9, "rows": 12, "cols": 50, "gap": true, "data": "fresh screen"})
	b.WaitJS(rows+`.includes("fresh screen") && !`+rows+`.includes("hello world")`, wait)
	b.WaitJS(`!document.getElementById("notice").hidden`, wait)

	// end: the page says so and does not reconnect.
	c2.send(t, `{"t":"end","seq":10}`)
	b.WaitJS(`ptyView.ended && !ptyView.connected && document.getElementById("conn").textContent === "session closed"`, wait)
	f.none(time.Second)
	withinCSP(t, b)
}

func TestSharePage(t *testing.T) {
	f := newFake(t)
	b := browser.New(t)
	b.Open(f.URL + "/v/s2#token=share-abc")

	c := f.next()
	if c.id != "s2" || c.hello.Token == nil || *c.hello.Token != "share-abc" {
		t.Fatalf("share hello: id %q %+v, want s2 with token share-abc", c.id, c.hello)
	}
	c.send(t, `{"t":"hello","id":"s2","name":"editor","label":"Ana's editor","readOnly":true}`)
	c.sendJSON(t, map[string]any{"t": "picture", "seq": 1, "rows": 5, "cols": 30, "data": "shared"})
	b.WaitJS(`document.getElementById("title").textContent === "watching: Ana's editor"`, wait)
	b.WaitJS(`document.querySelector(".xterm-rows").textContent.includes("shared")`, wait)
	b.WaitJS(`document.getElementById("back").hidden`, wait)
	// A share link's page says who holds the input, and offers no take.
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":false,"since":"2026-01-02T03:04:05Z","epoch":2}`)
	b.WaitJS(`document.getElementById("control").textContent.startsWith("Controlled by operator since") && document.getElementById("controls").hidden`, wait)

	// An error is shown, and ends the view like end does.
	c.send(t, `{"t":"error","code":"expired","message":"this share link has expired"}`)
	b.WaitJS(`document.getElementById("error").textContent.includes("this share link has expired") && ptyView.error`, wait)
	b.WaitJS(`!ptyView.connected`, wait)
	f.none(time.Second)

	for _, u := range f.requested() {
		if strings.Contains(u, "share-abc") {
			t.Errorf("the share token was sent in a URL: %s", u)
		}
	}
	withinCSP(t, b)
}

func TestConsolePage(t *testing.T) {
	f := newFake(t)
	b := browser.New(t)
	shots := screenshots(t)

	// Not logged in: the page says how to.
	b.Open(f.URL + "/")
	b.WaitJS(`document.getElementById("message").textContent.includes("log in with the console URL ptymcp printed")`, wait)

	b.Open(f.URL + "/#token=console-secret-42")
	b.WaitJS(`document.querySelectorAll("#sessions tbody tr").length === 2`, wait)
	var got []struct {
		Cells []string
		Href  string
	}
	b.Eval(`[...document.querySelectorAll("#sessions tbody tr")].map((tr) => ({
		cells: [...tr.cells].map((td) => td.textContent),
		href: tr.querySelector("a").getAttribute("href"),
	}))`, &got)
	want := []struct {
		cells []string
		href  string
	}{
		{[]string{"build", "agent-a", "local", "/work/app", "make", "running controlled by operator since ", "3s ago"}, "/s/s1"},
		{[]string{"editor", "agent-b", "gpu-1", "/home/dev", "vim", "waiting for input: vim", "2m ago"}, "/s/s2"},
	}
	for i, w := range want {
		same := len(got[i].Cells) == len(w.cells)
		for j := 0; same && j < len(w.cells); j++ {
			// A time of day is in the browser's zone.
			same = got[i].Cells[j] == w.cells[j] || strings.HasSuffix(w.cells[j], " since ") && strings.HasPrefix(got[i].Cells[j], w.cells[j])
		}
		if !same || got[i].Href != w.href {
			t.Errorf("row %d: %q → %s, want %q → %s", i, got[i].Cells, got[i].Href, w.cells, w.href)
		}
	}
	var hash string
	b.Eval(`location.hash`, &hash)
	if hash != "" {
		t.Errorf("the token fragment is still in the address: %q", hash)
	}
	var message string
	b.Eval(`document.getElementById("message").hidden ? "" : document.getElementById("message").textContent`, &message)
	if message != "" {
		t.Errorf("logged in, the page still says %q", message)
	}
	b.Screenshot(filepath.Join(shots, "console.png"))

	// Every badge's words.
	var badges []string
	b.Eval(`import("/assets/common.js").then((m) => [
		{badge: "running"}, {badge: "prompt", reader: "bash", exitCode: 3}, {badge: "prompt", exitCode: 0}, {badge: "prompt"},
		{badge: "waiting", reader: "python3"}, {badge: "interactive", reader: "top", idleMs: 1500},
		{badge: "interactive", reader: "top"}, {badge: "secret", reader: "bash"}, {badge: "secret"},
		{badge: "exited", exitCode: 2}, {badge: "lost"},
	].map(m.badgeText))`, &badges)
	if w := "running|at prompt (last exit 3)|at prompt (last exit 0)|at prompt|waiting for input: python3|interactive: top, output 1s ago|" +
		"interactive: top|secret prompt: bash|secret prompt|exited (2)|host lost"; strings.Join(badges, "|") != w {
		t.Errorf("badges %q, want %s", badges, w)
	}

	f.mu.Lock()
	logins := append([]string(nil), f.logins...)
	f.mu.Unlock()
	if len(logins) != 1 || logins[0] != "console-secret-42" {
		t.Errorf("logins %q, want one with the fragment's token", logins)
	}
	for _, u := range f.requested() {
		if strings.Contains(u, "console-secret-42") || strings.Contains(u, "token") {
			t.Errorf("a token was sent in a URL: %s", u)
		}
	}
	withinCSP(t, b)
}

// withinCSP fails t if the page broke the fake's Content-Security-Policy.
func withinCSP(t *testing.T, b *browser.Browser) {
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

// typeKeys types keys into whatever has the page's focus, as a person's
// keyboard does: a key down that carries its text, then the key up.
// (chromedp.KeyEvent sends the text as a separate char event, which the
// page's cancelled key down does not suppress: xterm would take each key
// twice.)
func typeKeys(t *testing.T, b *browser.Browser, keys string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), wait)
	defer cancel()
	for _, r := range keys {
		evs := kb.Encode(r)
		text := ""
		for _, ev := range evs {
			if ev.Type == kb.KeyChar {
				text = ev.Text
			}
		}
		for _, ev := range evs {
			if ev.Type == kb.KeyChar {
				continue
			}
			if ev.Type == kb.KeyDown {
				ev.Text, ev.UnmodifiedText = text, text
			}
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
				t.Fatalf("type %q: %v", keys, err)
			}
		}
	}
}

// inputs reads the page's input messages until their data joins into
// want; any other message fails t.
func (wc *watch) inputs(t *testing.T, want string) {
	t.Helper()
	var got strings.Builder
	for got.Len() < len(want) {
		m := wc.recv(t)
		if m["t"] != "input" {
			t.Fatalf("the page sent %v; want input (have %q of %q)", m, got.String(), want)
		}
		got.WriteString(m["data"].(string))
	}
	if got.String() != want {
		t.Fatalf("the page sent input %q, want %q", got.String(), want)
	}
}

// Taking over in the page: an operator's page offers Take control (with
// an interrupt), and while the server says it holds the input it types
// what the keyboard gives, fits the session to the window, shows the
// banner with the idle countdown and Hand back; the terminal's answers to
// queries are never sent; a refusal is shown and is not final; another
// holder is named and the page types nothing.
func TestTakeOverPage(t *testing.T) {
	f := newFake(t)
	b := browser.New(t)
	b.Open(f.URL + "/s/s1")
	c := f.next()
	c.send(t, `{"t":"hello","id":"s1","name":"build","label":"build","readOnly":false}`)
	c.sendJSON(t, map[string]any{"t": "picture", "seq": 1, "rows": 10, "cols": 40, "data": "$ "})
	c.send(t, `{"t":"control","holder":"agent","person":false,"you":false,"epoch":1}`)
	b.WaitJS(`!document.getElementById("controls").hidden && !document.getElementById("take").hidden &&
		document.getElementById("handback").hidden && document.getElementById("banner").hidden &&
		document.getElementById("control").textContent === "The agent has control" && ptyView.control.epoch === 1`, wait)

	b.Eval(`document.getElementById("interrupt").click(); document.getElementById("take").click()`, nil)
	if m := c.recv(t); m["t"] != "take" || m["interrupt"] != true {
		t.Fatalf("take sent %v, want take with interrupt", m)
	}
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":true,"since":"2026-01-02T03:04:05Z","epoch":2,"idleLeftMs":120000,"idleTimeoutMs":600000}`)
	b.WaitJS(`!document.getElementById("banner").hidden && document.getElementById("banner").textContent.includes("You have control — the agent waits") &&
		/after (2:00|1:5\d) without/.test(document.getElementById("idle").textContent) &&
		!document.getElementById("handback").hidden && document.getElementById("take").hidden &&
		!ptyView.term.options.disableStdin && document.activeElement.classList.contains("xterm-helper-textarea")`, wait)

	// The session is sized to fill the stage at the terminal's font.
	m := c.recv(t)
	var fit struct{ Cols, Rows float64 }
	// (at the holder's font, 14 px, whatever font the view draws in)
	b.Eval(`(() => { const c = ptyView.cellAt(14), st = document.getElementById("stage");
		return { cols: Math.floor(st.clientWidth / c.width), rows: Math.floor(st.clientHeight / c.height) }; })()`, &fit)
	if m["t"] != "resize" || m["cols"] != fit.Cols || m["rows"] != fit.Rows || fit.Cols <= 40 || fit.Rows <= 10 {
		t.Fatalf("holding, the page sent %v; want a resize to %vx%v (more than 40x10)", m, fit.Cols, fit.Rows)
	}
	c.send(t, fmt.Sprintf(`{"t":"resize","seq":2,"rows":%v,"cols":%v}`, fit.Rows, fit.Cols))

	typeKeys(t, b, "ls -l\r")
	c.inputs(t, "ls -l\r")

	// Queries in the output are the session's to answer: the page sends
	// no report, and the next input is the next key.
	c.out(t, 3, "\x1b[6n\x1b[c\x1b[>c\x1b]11;?\x07")
	b.WaitJS(`ptyView.seq === 3`, wait)
	typeKeys(t, b, "x")
	c.inputs(t, "x")

	// A refusal is shown, and the view goes on.
	c.send(t, `{"t":"refused","code":"control_stale","message":"control moved on"}`)
	b.WaitJS(`ptyView.refused && ptyView.refused.code === "control_stale" && !document.getElementById("refused").hidden &&
		document.getElementById("refused").textContent.includes("control moved on") && ptyView.connected && !ptyView.error`, wait)

	// Another person holds it: named, and the keyboard types nothing (the
	// next message the page sends is the marker after the keys).
	c.send(t, `{"t":"control","holder":"ana","person":true,"you":false,"since":"2026-01-02T03:04:05Z","epoch":3,"idleLeftMs":100000}`)
	b.WaitJS(`document.getElementById("control").textContent.startsWith("Controlled by ana since") &&
		document.getElementById("banner").hidden && ptyView.term.options.disableStdin && !document.getElementById("take").hidden`, wait)
	typeKeys(t, b, "y")
	b.Eval(`ptyView.send({t: "marker"})`, nil)
	if m := c.recv(t); m["t"] != "marker" {
		t.Fatalf("without the input, the page sent %v", m)
	}

	c.send(t, `{"t":"control","holder":"operator","person":true,"you":true,"since":"2026-01-02T03:04:05Z","epoch":4,"idleLeftMs":600000}`)
	b.WaitJS(`!document.getElementById("handback").hidden`, wait)

	// The socket drops while the page holds the input: back, it takes the
	// input again, as nobody took it meanwhile (the same epoch).
	if err := c.c.Close(websocket.StatusGoingAway, "restart"); err != nil {
		t.Fatalf("close: %v", err)
	}
	c = f.next()
	c.send(t, `{"t":"hello","id":"s1","name":"build","label":"build","readOnly":false}`)
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":false,"since":"2026-01-02T03:04:05Z","epoch":4,"idleLeftMs":500000}`)
	if m := c.recv(t); m["t"] != "take" || m["interrupt"] != false {
		t.Fatalf("back from a drop while holding, the page sent %v; want take without interrupt", m)
	}
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":true,"since":"2026-01-02T03:04:05Z","epoch":5,"idleLeftMs":600000}`)
	b.WaitJS(`!document.getElementById("handback").hidden && !document.getElementById("banner").hidden`, wait)

	// Hand back.
	b.Screenshot(filepath.Join(screenshots(t), "take-over.png"))
	b.Eval(`document.getElementById("handback").click()`, nil)
	if m := c.recv(t); m["t"] != "return" {
		t.Fatalf("hand back sent %v", m)
	}
	c.send(t, `{"t":"control","holder":"agent","person":false,"you":false,"epoch":6}`)
	b.WaitJS(`document.getElementById("banner").hidden && ptyView.term.options.disableStdin && document.getElementById("control").textContent === "The agent has control"`, wait)
	withinCSP(t, b)
}
