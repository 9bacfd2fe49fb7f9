package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyactor/ptyactor/test/browser"
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
	b := browser.New(t)
	state := t.TempDir()
	cmd := exec.Command(binary(t), append(append([]string{}, fastFlags...), extra...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "console", Version: "0"}, nil).
		Connect(testkit.Ctx(t), &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = cs.Close()
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", tailString(stderr.String(), 4000))
		}
	})
	c := &client{t: t, cs: cs}

	urlRE := regexp.MustCompile(`ptymcp: console \(watch the terminals in a browser\): (http://127\.0\.0\.1:\d+/#token=[A-Za-z0-9_-]{43})\n`)
	var consoleURL string
	testkit.WaitFor(t, 10*time.Second, "the console URL on stderr", func() bool {
		m := urlRE.FindStringSubmatch(stderr.String())
		if m != nil {
			consoleURL = m[1]
		}
		return m != nil
	})
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
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("waiting for input")`, 15*time.Second)
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
	  ws.onmessage = (e) => { if (typeof e.data === "string") { const m = JSON.parse(e.data); if (m.t === "error") window.typed = m.code; } };
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

	_ = cs.Close()
	closed = true
	testkit.WaitFor(t, 20*time.Second, "the URL file removed at exit", func() bool {
		_, err := os.Stat(file)
		return os.IsNotExist(err)
	})
}

// Over HTTP the console is on the -http listener, and the bearer token
// logs the person in (from the URL's fragment); share links name that
// listener.
func TestHTTPConsoleInBrowser(t *testing.T) {
	b := browser.New(t)
	s := httpServer(t)
	c := httpClient(t, s)
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	c.send(id, "echo over-http")
	b.Open("http://" + s.addr + "/#token=" + s.token)
	b.WaitJS(`document.body.innerText.includes(`+strconv.Quote(id)+`) && document.body.innerText.includes("waiting for input")`, 15*time.Second)
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
func docShot(t *testing.T, b *browser.Browser, name string) {
	t.Helper()
	dir := os.Getenv("PTYACTOR_DOC_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	b.Screenshot(filepath.Join(dir, name))
}
