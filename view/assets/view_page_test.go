package assets_test

// The live view's page and the share link's page in a browser: the
// picture, the stream, the badges, read-only for a share link.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestViewPage(t *testing.T) {
	f := newFake(t)
	b := testkit.NewBrowser(t)
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
	b := testkit.NewBrowser(t)
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
