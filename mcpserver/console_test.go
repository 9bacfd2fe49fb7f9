package mcpserver

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// bufferText is the JS that reads the live view's terminal as text.
const bufferText = `(() => { const b = window.ptyView && window.ptyView.term.buffer.active; if (!b) return "";
  let s = ""; for (let i = 0; i < b.length; i++) s += b.getLine(i).translateToString(true) + "\n"; return s; })()`

// The console of a stdio ptymcp, end to end in a real browser: its URL
// (token in the fragment) is printed on stderr and written to a 0600
// file; the console lists the session with the kernel's badge; a share
// link the model made shows the session live, in colour, and what it
// prints next; the link cannot type; unshare revokes it; the URL file is
// removed when the server exits.
func TestConsoleInBrowser(t *testing.T) { consoleRoad(t, nil) }

// The same road for terminals on a real ptyhost: the console lists the
// host's session with the host's badge, and the share link shows it live
// (its events cross the host link).
func TestConsoleRemoteInBrowser(t *testing.T) {
	host := startPtyhost(t, "-idle-silence-ms", "30000")
	lose := func() {
		if err := syscall.Kill(host.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	consoleRoad(t, lose, "-host", host.Addr(), "-host-insecure")
}

// consoleRoad runs the console's road; with lose, it then loses the
// session's host and the console shows it.
func consoleRoad(t *testing.T, lose func(), extra ...string) {
	b := testkit.NewBrowser(t)
	state := t.TempDir()
	cmd, stderr := binaryCmd(t, state, withFast(extra...)...)
	c := connect(t, cmd, stderr, "console", nil, nil)
	consoleURL := awaitConsoleURL(t, stderr)
	if n := strings.Count(stderr.String(), "#token="); n != 1 {
		t.Fatalf("the token is on stderr %d times, want once", n)
	}
	file := filepath.Join(state, "ptyactor", "console", "ptymcp-"+strconv.Itoa(cmd.Process.Pid)+".url")
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("URL file %s: %v, %v", file, st, err)
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != consoleURL {
		t.Fatalf("URL file holds %q, stderr %q", b, consoleURL)
	}

	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	c.send(id, `printf '\033[31mred-text\033[0m plain\n'`)

	// The console lists it, waiting for input at the shell's prompt.
	b.Open(consoleURL)
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("at prompt")`, 15*time.Second)
	if strings.Contains(b.Output(), "#token=") {
		t.Fatal("the page logged its token")
	}
	docShot(t, b, "console.png")

	share := c.ok(tools.TerminalShare, obj{"sessionId": id, "label": "build for ana"})
	link := share.str("url")
	if !strings.HasPrefix(link, strings.Split(consoleURL, "#")[0]+"v/"+id+"#token=") {
		t.Fatalf("share link %q", link)
	}
	b.Open(link)
	b.WaitJS(`window.ptyView && window.ptyView.connected && `+bufferText+`.includes("red-text plain")`, 15*time.Second)
	b.WaitJS(`document.getElementById("title").textContent === "watching: build for ana"`, 5*time.Second)
	// What it prints next, in colour: drawn with xterm's red.
	c.send(id, `printf 'next-%d \033[31mlive-red\033[0m\n' 42`)
	b.WaitJS(bufferText+`.includes("next-42 live-red")`, 15*time.Second)
	b.WaitJS(`[...document.querySelectorAll(".xterm-rows span")].some(s => s.textContent.includes("live-red") && s.className.includes("xterm-fg-1"))`, 5*time.Second)

	// A page opened while vim runs shows vim's screen in colour: its
	// status line in reverse video, from the picture alone.
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "vim -u NONE -N -n -c 'set laststatus=2' -c 'syntax on' notes.sh"})
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "i#!/bin/sh\recho \"hello\" # a comment", "submit": false, "keys": []string{"Escape"}})
	b.Open("about:blank")
	b.Open(link)
	b.WaitJS(`[...document.querySelectorAll(".xterm-rows span")].some(s => s.textContent.includes("notes.sh") && s.className.includes("xterm-bg-257"))`, 15*time.Second)
	docShot(t, b, "live-vim.png")
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": ":q!"})

	// The link cannot type: the server refuses what a page sends.
	tok := link[strings.Index(link, "#token=")+len("#token="):]
	b.WaitJS(`(() => { if (window.typed) return window.typed === "read_only";
	  window.typed = "pending";
	  const ws = new WebSocket("ws://" + location.host + "/api/watch/`+id+`");
	  ws.onopen = () => { ws.send(JSON.stringify({t: "hello", since: 0, token: "`+tok+`"})); ws.send(JSON.stringify({t: "input", data: "touch /tmp/x\r"})); };
	  ws.onmessage = (e) => { if (typeof e.data === "string") { const m = JSON.parse(e.data); if (m.t === "refused" || m.t === "error") window.typed = m.code; } };
	  return false; })()`, 10*time.Second)

	if n := c.ok(tools.TerminalUnshare, obj{"sessionId": id}).S["revoked"]; n != 1.0 {
		t.Fatalf("unshare revoked %v", n)
	}
	b.Open("about:blank") // the same URL again would not load the page again
	b.Open(link)
	b.WaitJS(`window.ptyView && window.ptyView.error && window.ptyView.error.includes("forbidden")`, 10*time.Second)

	// While getpass waits, the console says the terminal wants a secret.
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": `python3 -c "import getpass; getpass.getpass('pw: ')"`})
	b.Open(consoleURL)
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("secret prompt")`, 15*time.Second)
	c.ok(tools.TerminalSend, obj{"sessionId": id, "text": "", "keys": []string{"Ctrl-C"}, "submit": false})

	if lose != nil {
		lose()
		b.Open(consoleURL)
		b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("host lost")`, 20*time.Second)
	}

	_ = c.cs.Close()
	testkit.WaitFor(t, 20*time.Second, "the URL file removed at exit", func() bool {
		_, err := os.Stat(file)
		return os.IsNotExist(err)
	})
}

// Over HTTP the console is on the -http listener, and the bearer token
// logs the person in (from the URL's fragment); share links name that
// listener.
func TestHTTPConsoleInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	s := httpServer(t)
	c := httpClient(t, s)
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	c.send(id, "echo over-http")
	b.Open("http://" + s.addr + "/#token=" + s.token)
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("at prompt")`, 15*time.Second)
	link := c.ok(tools.TerminalShare, obj{"sessionId": id, "label": "http share"}).str("url")
	if !strings.HasPrefix(link, "http://"+s.addr+"/v/"+id+"#token=") {
		t.Fatalf("share link %q", link)
	}
	b.Open(link)
	b.WaitJS(bufferText+`.includes("over-http")`, 15*time.Second)
	// MCP still answers on /mcp, and still wants its token.
	res, err := http.Get(s.url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without the token: %d", res.StatusCode)
	}
}

// docShot saves a screenshot of the page: into PTYACTOR_DOC_SHOTS when
// set (the pictures in docs/img are taken so), else into the test's
// temporary folder.
func docShot(t *testing.T, b *testkit.Browser, name string) {
	t.Helper()
	dir := os.Getenv("PTYACTOR_DOC_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	b.Screenshot(filepath.Join(dir, name))
}

// consoleServer starts ptymcp over stdio with its console (state in a
// temporary folder) and returns its client and the console URL.
func consoleServer(t *testing.T, extra ...string) (*client, string) {
	t.Helper()
	cmd, stderr := binaryCmd(t, t.TempDir(), withFast(extra...)...)
	c := connect(t, cmd, stderr, "console", nil, nil)
	return c, awaitConsoleURL(t, stderr)
}

// typeKeys types keys into whatever has the page's focus, as a person's
// keyboard does: a key down carrying its text, then the key up (with
// modifiers, e.g. chromedp.ModifierCtrl). chromedp.KeyEvent sends the text
// as a separate char event, which the page's cancelled key down does not
// suppress: xterm would take each key twice.
func typeKeys(t *testing.T, b *testkit.Browser, keys string, modifiers chromedp.Modifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Second)
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
			ev.Modifiers |= int64(modifiers)
			if ev.Type == kb.KeyDown && modifiers == 0 {
				ev.Text, ev.UnmodifiedText = text, text
			}
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
				t.Fatalf("type %q: %v", keys, err)
			}
		}
	}
}

// liveView opens session id's live view as the console's operator (the
// console URL logs the browser in) and waits until it shows that the
// agent holds the input.
func liveView(t *testing.T, b *testkit.Browser, consoleURL, id string) {
	t.Helper()
	b.Open(consoleURL)
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`)`, 15*time.Second)
	b.Open(strings.Split(consoleURL, "#")[0] + "s/" + id)
	b.WaitJS(`window.ptyView && ptyView.connected && ptyView.control && ptyView.control.holder === "agent" &&
		!document.getElementById("take").hidden && `+bufferText+`.includes("$ ")`, 15*time.Second)
}

// sendInFlight starts an agent's terminal_send of text and returns its
// result's channel, once the page shows the command running.
func sendInFlight(t *testing.T, b *testkit.Browser, c *client, id, text string) <-chan result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	done := callAsync(ctx, c, tools.TerminalSend, obj{"sessionId": id, "text": text})
	b.WaitJS(`ptyView.badge === "running"`, 15*time.Second)
	return done
}

// takenOver waits a second at most for the send's result, which must be
// settled by the take (cause taken_over).
func takenOver(t *testing.T, done <-chan result) {
	t.Helper()
	select {
	case r := <-done:
		if r.IsError || r.str("cause") != "taken_over" {
			t.Fatalf("the send in flight settled with %v: %s; want cause taken_over", r.S, r.Text)
		}
	case <-time.After(time.Second):
		t.Fatal("the send in flight did not settle within a second of the take")
	}
}

// Taking over in the browser, end to end: the operator takes control
// during the agent's long send, which settles at once (taken_over), the
// command left running; the agent's sends are refused while the operator
// holds control; keys typed into the page run in the shell; the console
// lists who holds it; Hand back lets the agent send again. Taken with
// "interrupt", the running command gets a SIGINT and is gone.
func TestTakeOverInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t)
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	liveView(t, b, consoleURL, id)

	// Without interrupt: the command goes on, and the person stops it.
	takeInFlight(t, b, c, id, `document.getElementById("take").click()`,
		`ptyView.control.you && ptyView.control.holder === "operator" && !document.getElementById("banner").hidden &&
		document.getElementById("banner").textContent.includes("You have control — the agent waits") && !document.getElementById("handback").hidden`)
	c.fails(tools.TerminalSend, obj{"sessionId": id, "text": "echo agent"}, "holds the input")
	stillRunning(t, b)
	docShot(t, b, "take-over.png")
	typeKeys(t, b, "c", chromedp.ModifierCtrl)
	typeKeys(t, b, "echo typed-$((6*7))\r", 0)
	b.WaitJS(bufferText+`.includes("typed-42")`, 15*time.Second)
	// The session fills the window now: the holder sized it.
	b.WaitJS(`ptyView.term.cols > 80 && ptyView.term.rows > 24`, 10*time.Second)

	// The console says who holds it.
	b.Open(strings.Split(consoleURL, "#")[0])
	b.WaitJS(`[...document.querySelectorAll("#sessions tbody tr")].some((tr) => tr.dataset.id === `+strconv.Quote(id)+` && tr.textContent.includes("controlled by operator since"))`, 15*time.Second)
	// Back on the live view: another page's hold, until this one takes it.
	b.Open(strings.Split(consoleURL, "#")[0] + "s/" + id)
	b.WaitJS(`ptyView.control && !ptyView.control.you && document.getElementById("control").textContent.startsWith("Controlled by operator since")`, 15*time.Second)
	b.Eval(`document.getElementById("take").click()`, nil)
	b.WaitJS(`ptyView.control.you`, 10*time.Second)
	// Its result says what the person did.
	r := handBack(t, b, c, id, "echo typed-$((6*7))")
	if !strings.Contains(r.Text, "A person (operator) had control") {
		t.Fatalf("the agent's first result after the hand back: handback %v\n%s", r.S["handback"], r.Text)
	}

	// With interrupt: the command gets a SIGINT; the shell is back at
	// its prompt, and what the person types runs at once.
	takeInFlight(t, b, c, id, `document.getElementById("interrupt").click(); document.getElementById("take").click()`, `ptyView.control.you`)
	b.WaitJS(`ptyView.badge === "prompt"`, 10*time.Second)
	typeKeys(t, b, "echo again-$((6*7))\r", 0)
	b.WaitJS(bufferText+`.includes("again-42")`, 10*time.Second)
	b.Eval(`document.getElementById("handback").click()`, nil)
	b.WaitJS(`ptyView.control.holder === "agent"`, 10*time.Second)
	c.send(id, "true")
	withinPolicy(t, b)
}

// A page whose hold moved on cannot type: a second page's take makes the
// first one's input refused (stale) and never written, and so does a
// hand back.
func TestTakeOverStaleInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t)
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	liveView(t, b, consoleURL, id)
	b.Eval(`document.getElementById("take").click()`, nil)
	b.WaitJS(`ptyView.control.you`, 10*time.Second)

	// A second page (an operator's socket of its own) takes control.
	b.WaitJS(`(() => { if (window.second) return window.second.control && window.second.control.you;
	  window.second = { control: null };
	  const ws = new WebSocket("ws://" + location.host + "/api/watch/`+id+`");
	  ws.onopen = () => { ws.send(JSON.stringify({t: "hello", since: 0})); ws.send(JSON.stringify({t: "take"})); };
	  ws.onmessage = (e) => { if (typeof e.data === "string") { const m = JSON.parse(e.data); if (m.t === "control") window.second.control = m; } };
	  window.second.ws = ws;
	  return false; })()`, 10*time.Second)
	// The first page's input, as it would send it: refused, and the page
	// shows it no longer holds control.
	b.Eval(`ptyView.send({t: "input", data: "echo stale-$((6*7))\r"})`, nil)
	b.WaitJS(`ptyView.refused && ptyView.refused.code === "control_stale" && !ptyView.control.you &&
		document.getElementById("banner").hidden && ptyView.term.options.disableStdin && ptyView.connected`, 10*time.Second)
	b.Eval(`window.second.ws.send(JSON.stringify({t: "input", data: "echo second-$((6*7))\r"}))`, nil)
	b.WaitJS(bufferText+`.includes("second-42")`, 10*time.Second)
	b.Eval(`window.second.ws.send(JSON.stringify({t: "return"}))`, nil)
	b.WaitJS(`ptyView.control.holder === "agent"`, 10*time.Second)

	// A page that handed back cannot type either.
	b.Eval(`ptyView.refused = null; document.getElementById("take").click()`, nil)
	b.WaitJS(`ptyView.control.you`, 10*time.Second)
	b.Eval(`document.getElementById("handback").click()`, nil)
	b.WaitJS(`ptyView.control.holder === "agent"`, 10*time.Second)
	typeKeys(t, b, "echo typed-after\r", 0)
	b.Eval(`ptyView.send({t: "input", data: "echo returned-$((6*7))\r"})`, nil)
	b.WaitJS(`ptyView.refused && ptyView.refused.code === "control_stale"`, 10*time.Second)
	r := c.send(id, "echo agent-$((6*7))")
	if !strings.Contains(r.Text, "agent-42") {
		t.Fatalf("the agent's send after the hand back: %s", r.Text)
	}
	b.WaitJS(bufferText+`.includes("agent-42")`, 10*time.Second)
	var screen string
	b.Eval(bufferText, &screen)
	for _, never := range []string{"stale-", "returned-", "typed-after"} {
		if strings.Contains(screen, never) || strings.Contains(r.Text, never) {
			t.Fatalf("input of a page without control was written (%q):\n%s", never, screen)
		}
	}
	b.Eval(`window.second.ws.close()`, nil)
	withinPolicy(t, b)
}

// The idle timeout hands control back by itself: the page counts down,
// then shows that the agent holds control again, and the agent sends.
func TestTakeOverIdleInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	c, consoleURL := consoleServer(t, "-control-idle-timeout", "2s")
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	liveView(t, b, consoleURL, id)
	b.Eval(`document.getElementById("take").click()`, nil)
	b.WaitJS(`ptyView.control.you && ptyView.control.idleTimeoutMs === 2000 && /after 0:0[12] without/.test(document.getElementById("idle").textContent)`, 10*time.Second)
	b.WaitJS(`ptyView.control.holder === "agent" && !ptyView.control.you && document.getElementById("banner").hidden &&
		document.getElementById("control").textContent === "The agent has control"`, 15*time.Second)
	r := c.send(id, "echo back-$((6*7))")
	if !strings.Contains(r.Text, "back-42") {
		t.Fatalf("the agent's send after the idle hand back: %s", r.Text)
	}
}

// withinPolicy fails t if the page broke the server's
// Content-Security-Policy, or threw.
func withinPolicy(t *testing.T, b *testkit.Browser) {
	t.Helper()
	for _, m := range b.Console() {
		if strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("the page broke the policy: %s", m.Text)
		}
	}
}
