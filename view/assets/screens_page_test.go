package assets_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

// manySessionsJSON is a console's list with what widens a table: a long
// name, a long path, a long badge and a held note.
const manySessionsJSON = `[
 {"id":"s1","name":"build","owner":"claude-code #1","host":"local","cwd":"/work/app","program":"make","badge":"running","idleMs":3000,
  "control":{"holder":"operator","person":true,"since":"2026-01-02T03:04:05Z"}},
 {"id":"s2","name":"editor","owner":"claude-code #2 (token@127.0.0.1)","host":"gpu-1","cwd":"/home/dev","program":"vim","badge":"interactive","reader":"vim","idleMs":125000},
 {"id":"s3","name":"integration-tests-for-the-payment-service","owner":"codex #3","host":"local",
  "cwd":"/home/dev/src/github.com/example/payment-service/internal/integration/testdata","program":"python3","badge":"waiting","reader":"python3","idleMs":4000},
 {"id":"s4","name":"shell","owner":"claude-code #1","host":"local","cwd":"/work","program":"bash","badge":"prompt","exitCode":0,"idleMs":61000}
]`

// vimScreen is what the live view shows in the screenshots: vim on a
// Python file, whose "__name__" the view once drew as "  name  ".
var vimScreen = strings.Join(append(append([]string{
	"\x1b[33mimport\x1b[0m sys",
	"",
	"",
	"\x1b[33mdef\x1b[0m \x1b[36mmain\x1b[0m(argv):",
	"    \x1b[33mfor\x1b[0m arg \x1b[33min\x1b[0m argv[1:]:",
	"        \x1b[36mprint\x1b[0m(\x1b[31mf\"{arg!r:_<20}|\"\x1b[0m)  \x1b[34m# a_b_c, gy|\x1b[0m",
	"    \x1b[33mreturn\x1b[0m 0",
	"",
	"",
	"\x1b[33mif\x1b[0m \x1b[35m__name__\x1b[0m == \x1b[31m\"__main__\"\x1b[0m:",
	"    sys.exit(main(sys.argv))",
}, repeat("\x1b[34m~\x1b[0m", 12)...), "\x1b[1m\"app.py\" 11L, 187B\x1b[0m                                       10,4          All"), "\r\n")

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// box is an element's place on the screen, in CSS pixels.
type box struct {
	Left, Top, Right, Bottom, Width, Height float64
	Shown                                   bool // rendered (not display: none, not hidden)
}

// boxJS is the box of the first element that matches the argument.
const boxJS = `((sel) => {
	const e = document.querySelector(sel);
	if (!e) return null;
	const r = e.getBoundingClientRect();
	return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height, shown: e.getClientRects().length > 0 };
})`

// pageFits fails t if the page scrolls sideways or was zoomed out to fit:
// its layout must be exactly the screen's width.
func pageFits(t *testing.T, b *testkit.Browser, s testkit.BrowserScreen) {
	t.Helper()
	var m struct{ ScrollWidth, ClientWidth, InnerWidth, Scale float64 }
	b.Eval(`({ scrollWidth: document.scrollingElement.scrollWidth, clientWidth: document.documentElement.clientWidth,
		innerWidth: innerWidth, scale: visualViewport.scale })`, &m)
	if m.ScrollWidth > m.InnerWidth || m.ScrollWidth > m.ClientWidth || m.InnerWidth != float64(s.Width) || m.Scale != 1 {
		t.Errorf("the page is %v px wide in a %v px layout (inner %v, screen %d, zoom %v): it scrolls sideways or was zoomed out",
			m.ScrollWidth, m.ClientWidth, m.InnerWidth, s.Width, m.Scale)
	}
}

// reachable fails t unless the element sel is shown wholly inside the
// viewport and, on a touch screen, is a target a finger hits (44 CSS px
// asked for, 40 required); it returns the element's box.
func reachable(t *testing.T, b *testkit.Browser, s testkit.BrowserScreen, sel string) box {
	t.Helper()
	var bx *box
	b.Eval(boxJS+`(`+jsString(sel)+`)`, &bx)
	if bx == nil || !bx.Shown {
		t.Fatalf("%s is not on the page", sel)
	}
	if bx.Left < -0.5 || bx.Top < -0.5 || bx.Right > float64(s.Width)+0.5 || bx.Bottom > float64(s.Height)+0.5 || bx.Width < 1 || bx.Height < 1 {
		t.Errorf("%s is at %+v, not inside the %dx%d viewport", sel, *bx, s.Width, s.Height)
	}
	if s.Mobile && (bx.Height < 40 || bx.Width < 40) {
		t.Errorf("%s is %.0fx%.0f px: too small for a finger (40x40 at least)", sel, bx.Width, bx.Height)
	}
	return *bx
}

// press activates the element at bx: a tap on a touch screen, a click
// otherwise.
func press(b *testkit.Browser, s testkit.BrowserScreen, sel string, bx box) {
	if s.Mobile {
		b.Tap((bx.Left+bx.Right)/2, (bx.Top+bx.Bottom)/2)
		return
	}
	b.Eval(`document.querySelector(`+jsString(sel)+`).click()`, nil)
}

// docShot keeps a screenshot for the docs: only at 1x, only on the
// screens named (all when none is), and only into $PTYACTOR_SCREENSHOTS
// (PTYACTOR_SCREENSHOTS=$PWD/docs/img writes the ones docs/console.md
// shows).
func docShot(t *testing.T, b *testkit.Browser, s testkit.BrowserScreen, name string, on ...string) {
	t.Helper()
	dir := os.Getenv("PTYACTOR_SCREENSHOTS")
	if dir == "" || s.DPR != 1 || len(on) > 0 && !slices.Contains(on, s.Name) {
		return
	}
	b.Screenshot(filepath.Join(screenshots(t), fmt.Sprintf("%s-%s.png", name, s.Name)))
}

// TestScreensInBrowser lays the console, the live view (an operator's,
// who takes control and hands back, and a share link's) and the secret
// page out on a desktop, a tablet and a phone, at 1x and 2x: no page
// scrolls sideways or is zoomed out, every session's name, badge and last
// output is inside the screen, the terminal's text is 9 px at least and
// the terminal scrolls inside its stage when wider, and Take control,
// Hand back, the secret field and Submit are inside the screen, big
// enough for a finger on a touch screen, and work by touch.
func TestScreensInBrowser(t *testing.T) {
	f := newFake(t)
	f.mu.Lock()
	f.sessions = manySessionsJSON
	f.mu.Unlock()
	sf := newSecretFake(t)
	sf.prompt = func() (int, string) {
		return http.StatusOK, `{"session":"s1","name":"deploy","line":"[sudo] password for ada:","reader":"sudo","expiresAt":"2030-01-01T00:00:00Z"}`
	}
	b := testkit.NewBrowser(t)
	for _, s := range testkit.BrowserScreens() {
		t.Run(s.String(), func(t *testing.T) {
			b.Emulate(s)
			t.Run("console", func(t *testing.T) { consoleOn(t, b, f, s) })
			t.Run("view", func(t *testing.T) { viewOn(t, b, f, s) })
			t.Run("share", func(t *testing.T) { shareOn(t, b, f, s) })
			t.Run("secret", func(t *testing.T) { secretOn(t, b, sf, s) })
		})
	}
	withinCSP(t, b)
}

func consoleOn(t *testing.T, b *testkit.Browser, f *fake, s testkit.BrowserScreen) {
	b.Open(f.URL + "/#token=console-secret-42")
	b.WaitJS(`document.querySelectorAll("#sessions tbody tr").length === 4 && document.getElementById("status").textContent === "live"`, wait)
	pageFits(t, b, s)
	for i := 1; i <= 4; i++ {
		row := fmt.Sprintf(`#sessions tbody tr:nth-child(%d)`, i)
		for _, part := range []string{"td.name a", "td.state .badge", "td.idle"} {
			var bx *box
			b.Eval(boxJS+`(`+jsString(row+" "+part)+`)`, &bx)
			if bx == nil || !bx.Shown || bx.Left < -0.5 || bx.Right > float64(s.Width)+0.5 || bx.Width < 1 {
				t.Errorf("session %d's %s is at %+v: not inside the %d px wide screen", i, part, bx, s.Width)
			}
		}
		if s.Mobile {
			reachable(t, b, s, row+" td.name a")
		}
	}
	// The words, as a person reads them, whatever the layout.
	var third string
	b.Eval(`document.querySelector("#sessions tbody tr:nth-child(3)").innerText`, &third)
	for _, want := range []string{"integration-tests-for-the-payment-service", "waiting for input: python3", "4s ago"} {
		if !strings.Contains(third, want) {
			t.Errorf("the third session reads %q, without %q", third, want)
		}
	}
	reachable(t, b, s, "#logout")
	docShot(t, b, s, "console")
}

func viewOn(t *testing.T, b *testkit.Browser, f *fake, s testkit.BrowserScreen) {
	b.Open(f.URL + "/s/s2")
	c := f.next()
	c.send(t, `{"t":"hello","id":"s2","name":"editor","label":"editor","readOnly":false}`)
	c.send(t, `{"t":"state","badge":"interactive","reader":"vim"}`)
	c.sendJSON(t, map[string]any{"t": "picture", "seq": 1, "rows": 24, "cols": 80, "data": vimScreen})
	c.send(t, `{"t":"control","holder":"agent","person":false,"you":false,"epoch":1}`)
	b.WaitJS(settledJS("All")+` && !document.getElementById("take").hidden`, wait)
	pageFits(t, b, s)
	terminalFits(t, b, s)
	reachable(t, b, s, "#controls label") // the interrupt box's, which a tap on its words ticks
	docShot(t, b, s, "view")

	// Take control, by touch on a touch screen.
	take := reachable(t, b, s, "#take")
	press(b, s, "#take", take)
	if m := c.recv(t); m["t"] != "take" || m["interrupt"] != false {
		t.Fatalf("Take control sent %v, want take without interrupt", m)
	}
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":true,"since":"2026-01-02T03:04:05Z","epoch":2,"idleLeftMs":600000,"idleTimeoutMs":600000}`)
	b.WaitJS(`!document.getElementById("handback").hidden && !document.getElementById("banner").hidden`, wait)
	// Holding, the page sizes the session to its screen; the server
	// answers with the resize.
	m := c.recv(t)
	if m["t"] != "resize" {
		t.Fatalf("holding, the page sent %v, want its size", m)
	}
	c.send(t, fmt.Sprintf(`{"t":"resize","seq":2,"rows":%v,"cols":%v}`, m["rows"], m["cols"]))
	b.WaitJS(fmt.Sprintf(`ptyView.term.cols === %v && ptyView.term.rows === %v && `, m["cols"], m["rows"])+fittedJS, wait)
	pageFits(t, b, s)
	terminalFits(t, b, s)
	var font float64
	b.Eval(`ptyView.term.options.fontSize`, &font)
	if font < 13 {
		t.Errorf("sized for the holder's screen, the terminal draws at %.2f px, not about 14", font)
	}
	docShot(t, b, s, "take-over", "phone")
	back := reachable(t, b, s, "#handback")
	press(b, s, "#handback", back)
	// (The banner's countdown may rewrap the header meanwhile: a new size.)
	for m = c.recv(t); m["t"] == "resize"; m = c.recv(t) {
	}
	if m["t"] != "return" {
		t.Fatalf("Hand back sent %v, want return", m)
	}
	c.send(t, `{"t":"end","seq":3}`)
	b.WaitJS(`ptyView.ended`, wait)
}

func shareOn(t *testing.T, b *testkit.Browser, f *fake, s testkit.BrowserScreen) {
	b.Open(f.URL + "/v/s2#token=share-abc")
	c := f.next()
	c.send(t, `{"t":"hello","id":"s2","name":"editor","label":"Ana's editor, the payment service's integration tests","readOnly":true}`)
	c.send(t, `{"t":"state","badge":"interactive","reader":"vim"}`)
	c.sendJSON(t, map[string]any{"t": "picture", "seq": 1, "rows": 40, "cols": 132, "data": vimScreen})
	c.send(t, `{"t":"control","holder":"operator","person":true,"you":false,"since":"2026-01-02T03:04:05Z","epoch":2}`)
	b.WaitJS(settledJS("")+` && document.getElementById("control").textContent.startsWith("Controlled by")`, wait)
	pageFits(t, b, s)
	terminalFits(t, b, s)
	c.send(t, `{"t":"end","seq":2}`)
	b.WaitJS(`ptyView.ended`, wait)
}

// terminalFits fails t unless the terminal sits at the stage's top, 9 px
// text at least, inside the stage, or, only at 9 px, wider than it and
// scrolled there (the page stays put).
func terminalFits(t *testing.T, b *testkit.Browser, s testkit.BrowserScreen) {
	t.Helper()
	var m struct {
		Term, Stage         box
		Font                float64
		ScrollW, ClientW    float64
		ScrollH, ClientH    float64
		StageBottom, InnerH float64
	}
	b.Eval(`(() => { const st = document.getElementById("stage");
		return { term: `+boxJS+`(".xterm-screen"), stage: `+boxJS+`("#stage"), font: ptyView.term.options.fontSize,
			scrollW: st.scrollWidth, clientW: st.clientWidth, scrollH: st.scrollHeight, clientH: st.clientHeight,
			stageBottom: st.getBoundingClientRect().bottom, innerH: innerHeight }; })()`, &m)
	if m.Font < 9 {
		t.Errorf("the terminal's text is %.2f px, under 9", m.Font)
	}
	if d := m.Term.Top - m.Stage.Top; d < -0.5 || d > 0.5 {
		t.Errorf("the terminal is %.1f px below the stage's top: a band above it", d)
	}
	if d := m.InnerH - m.StageBottom; d < -0.5 || d > 0.5 {
		t.Errorf("the stage ends %.1f px above the screen's bottom", d)
	}
	wider := m.Term.Width > m.Stage.Width+0.5
	if wider != (m.ScrollW > m.ClientW) {
		t.Errorf("the terminal is %.1f px wide in a %.1f px stage, which scrolls %v of %v", m.Term.Width, m.Stage.Width, m.ScrollW, m.ClientW)
	}
	if wider && m.Font != 9 {
		t.Errorf("the terminal overflows the stage at %.2f px, above the 9 px floor", m.Font)
	}
	if !wider && (m.Term.Left < m.Stage.Left-0.5 || m.Term.Right > m.Stage.Right+0.5) {
		t.Errorf("the terminal %+v sticks out of the stage %+v", m.Term, m.Stage)
	}
}

func secretOn(t *testing.T, b *testkit.Browser, f *secretFake, s testkit.BrowserScreen) {
	f.mu.Lock()
	before := len(f.bodies)
	f.mu.Unlock()
	b.Open(f.URL + "/secret/s1#token=tok-" + s.Name)
	b.WaitJS(`window.ptySecret && ptySecret.state === "ready"`, wait)
	pageFits(t, b, s)
	field := reachable(t, b, s, "#secret")
	submit := reachable(t, b, s, "#submit")
	docShot(t, b, s, "secret", "phone")
	// A finger on the field, the on-screen keyboard's text, a finger on
	// Submit.
	if s.Mobile {
		b.Eval(`document.getElementById("secret").blur()`, nil)
		b.Tap((field.Left+field.Right)/2, (field.Top+field.Bottom)/2)
		b.WaitJS(`document.activeElement === document.getElementById("secret")`, wait)
	}
	b.InsertText("pw-" + s.Name)
	press(b, s, "#submit", submit)
	b.WaitJS(`ptySecret.state === "sent"`, wait)
	f.mu.Lock()
	bodies := f.bodies[before:]
	f.mu.Unlock()
	if len(bodies) != 1 || bodies[0]["secret"] != "pw-"+s.Name || bodies[0]["token"] != "tok-"+s.Name {
		t.Errorf("the page posted %v, want the typed secret with its token", bodies)
	}
}
