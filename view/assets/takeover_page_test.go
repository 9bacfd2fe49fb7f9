package assets_test

// The take-over from the live view's page: the keys a person types reach
// the session as the bytes a terminal sends.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// typeKeys types keys into whatever has the page's focus, as a person's
// keyboard does: a key down that carries its text, then the key up.
// (chromedp.KeyEvent sends the text as a separate char event, which the
// page's cancelled key down does not suppress: xterm would take each key
// twice.)
func typeKeys(t *testing.T, b *testkit.Browser, keys string) {
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
	b := testkit.NewBrowser(t)
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
