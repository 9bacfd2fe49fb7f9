package mcpserver

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bytes"

	"github.com/coder/websocket"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// secretRig is a stdio ptymcp with its console, recording into its state
// folder, and everything the secret must never appear in: each result
// the model got, the server's stderr, and a watch socket that follows
// the session from the start.
type secretRig struct {
	t          *testing.T
	c          *client
	consoleURL string
	base       string
	state      string
	stderr     *syncBuf

	mu      sync.Mutex
	results []string // each result's text and structured content
	frames  strings.Builder
}

func newSecretRig(t *testing.T, extra ...string) *secretRig {
	t.Helper()
	r := &secretRig{t: t, state: t.TempDir()}
	var cmd *exec.Cmd
	cmd, r.stderr = binaryCmd(t, r.state, withFast(extra...)...)
	r.c = connect(t, cmd, r.stderr, "secret", nil, nil)
	r.consoleURL = awaitConsoleURL(t, r.stderr)
	r.base = strings.TrimSuffix(strings.Split(r.consoleURL, "#")[0], "/")
	return r
}

// call runs a tool as the model and keeps what it got.
func (r *secretRig) call(name string, args obj) result {
	r.t.Helper()
	res := r.c.call(name, args)
	b, _ := json.Marshal(res.S)
	r.mu.Lock()
	r.results = append(r.results, res.Text, string(b))
	r.mu.Unlock()
	return res
}

// watch follows session id on the console's socket, as the operator,
// from its first event, until the test ends.
func (r *secretRig) watch(id string) {
	r.t.Helper()
	token := r.consoleURL[strings.Index(r.consoleURL, "#token=")+len("#token="):]
	ctx, cancel := context.WithCancel(testkit.Ctx(r.t))
	hdr := http.Header{"Origin": {r.base}, "Authorization": {"Bearer " + token}}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.base, "http")+"/api/watch/"+id, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		cancel()
		r.t.Fatal(err)
	}
	ws.SetReadLimit(1 << 24)
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"t":"hello","since":0}`)); err != nil {
		cancel()
		r.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.frames.Write(b)
			r.mu.Unlock()
		}
	}()
	r.t.Cleanup(func() {
		cancel()
		ws.CloseNow()
		<-done
	})
}

// nowhere fails the test if secret is in a result, the server's stderr,
// the watch socket's frames, or any file of the state folder (the
// records); seen must be in the frames and the records, so the check
// looked where the terminal's events are.
func (r *secretRig) nowhere(secret, seen string) {
	r.t.Helper()
	r.mu.Lock()
	results, frames := strings.Join(r.results, "\n"), r.frames.String()
	r.mu.Unlock()
	if strings.Contains(results, secret) {
		r.t.Errorf("the secret %q is in a result the model got", secret)
	}
	if strings.Contains(r.stderr.String(), secret) {
		r.t.Errorf("the secret %q is in the server's log", secret)
	}
	testkit.WaitFor(r.t, 10*time.Second, "the watch socket's frames show "+seen, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		frames = r.frames.String()
		return strings.Contains(frames, seen)
	})
	if strings.Contains(frames, secret) {
		r.t.Errorf("the secret %q is in a frame of the watch socket", secret)
	}
	var records int
	testkit.WaitFor(r.t, 10*time.Second, "a record showing "+seen, func() bool {
		found := false
		records = 0
		_ = filepath.WalkDir(r.state, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			if strings.Contains(string(b), secret) {
				r.t.Errorf("the secret %q is in %s", secret, p)
			}
			if strings.Contains(p, "recordings") {
				records++
				found = found || strings.Contains(string(b), seen)
			}
			return nil
		})
		return found
	})
}

// enter opens a secret link in the (logged-in) browser, checks the
// prompt it shows, types secret and Enter, and waits for "Sent".
func enterSecret(t *testing.T, b *testkit.Browser, link, line, secret, shot string) {
	t.Helper()
	b.Open("about:blank") // a link differing only in its fragment would not load the page again
	b.Open(link)
	b.WaitJS(`window.ptySecret && ptySecret.state === "ready" && document.getElementById("line").textContent === `+strconv.Quote(line)+
		` && document.activeElement === document.getElementById("secret")`, 15*time.Second)
	typeKeys(t, b, secret, 0)
	b.WaitJS(`document.getElementById("secret").value.length === `+strconv.Itoa(len(secret)), 5*time.Second)
	if shot != "" {
		docShot(t, b, shot)
	}
	typeKeys(t, b, "\r", 0)
	b.WaitJS(`ptySecret.state === "sent" && !document.getElementById("done").hidden && document.getElementById("form").hidden &&
		document.getElementById("secret").value === ""`, 15*time.Second)
}

// A secret typed by a person, end to end: the model's send at read -s
// gets a link (secretUrl) and is told not to type the secret; its own
// text is refused (-refuse-secret-input); the link without the console
// login is refused; logged in, the person types the secret on the page,
// and the model's terminal_wait shows the program got it (its length)
// and that a person entered it; the link works once. Then python's
// getpass, and ssh-keygen's two passphrase prompts, each with a link of
// its own. No secret is ever in a result, the log, a viewer's frames or
// the records.
func TestSecretInBrowser(t *testing.T) {
	b := testkit.NewBrowser(t)
	r := newSecretRig(t, "-refuse-secret-input")
	id := r.call(tools.TerminalOpen, obj{"name": "deploy"}).str("sessionId")
	r.watch(id)
	const pw = "Tr0ub4dor-and-3-horses"
	res := r.call(tools.TerminalSend, obj{"sessionId": id, "text": `read -s -p 'pw: ' pw; echo; echo len=${#pw}`})
	link := res.str("secretUrl")
	if res.IsError || res.S["secret"] != true || !strings.HasPrefix(link, r.base+"/secret/"+id+"#token=") ||
		!strings.Contains(res.Text, `The terminal waits for a secret ("pw:"). Do not type it yourself: give the user this link to type it: `+link+` (it needs their console login). Then call terminal_wait.`) {
		t.Fatalf("the send at the prompt: %v\n%s", res.S, res.Text)
	}
	refused := r.call(tools.TerminalSend, obj{"sessionId": id, "text": "a-guess"})
	if !refused.IsError || !strings.Contains(refused.Text, "this server does not take it from the model") || !strings.Contains(refused.Text, "secretUrl") {
		t.Fatalf("the model's own text at the prompt: %s", refused.Text)
	}

	// Without the console's login the link is refused, and says where to
	// log in.
	b.Open(link)
	b.WaitJS(`window.ptySecret && ptySecret.state === "refused" && ptySecret.code === "not_logged_in" && document.getElementById("form").hidden &&
		document.querySelector("#message a[href='/']") !== null`, 15*time.Second)

	// Logged in (the console URL), the person types it.
	b.Open(r.consoleURL)
	b.WaitJS(`document.body.innerText.includes("deploy") && document.body.innerText.includes("secret prompt")`, 15*time.Second)
	enterSecret(t, b, link, "pw:", pw, "secret.png")
	b.WaitJS(`document.getElementById("name").textContent === "deploy"`, 5*time.Second)
	// The link works once.
	r.secretTakenOnce(b, id, link, pw)

	// python's getpass.
	const pw2 = "getpass-pw-9f8e7d"
	res = r.call(tools.TerminalSend, obj{"sessionId": id, "text": `python3 -c 'import getpass; print("plen", len(getpass.getpass("Password: ")))'`})
	if link = res.str("secretUrl"); link == "" {
		t.Fatalf("getpass: no link: %v\n%s", res.S, res.Text)
	}
	enterSecret(t, b, link, "Password:", pw2, "")
	if res = r.call(tools.TerminalWait, obj{"sessionId": id, "pattern": `plen [0-9]+\s`}); !strings.Contains(res.Text, "plen "+strconv.Itoa(len(pw2))) || res.S["secretEntered"] != true {
		t.Fatalf("getpass after the secret: %v\n%s", res.S, res.Text)
	}

	// ssh-keygen asks twice: each prompt's result brings its own link.
	// Then reading the key back asks for the passphrase a third time, and
	// prints the public key only if it is the one typed twice.
	const phrase = "ssh-phrase-0a1b2c3d"
	key := filepath.Join(t.TempDir(), "k")
	res = r.call(tools.TerminalSend, obj{"sessionId": id, "text": "ssh-keygen -q -t ed25519 -C secret-test -f " + key})
	first := res.str("secretUrl")
	if first == "" || !strings.Contains(res.Text, "passphrase") {
		t.Fatalf("ssh-keygen: no link: %v\n%s", res.S, res.Text)
	}
	enterSecret(t, b, first, strings.TrimSpace(lastLine(res.str("viewport"))), phrase, "")
	res = r.call(tools.TerminalWait, obj{"sessionId": id})
	second := res.str("secretUrl")
	if res.S["secretEntered"] != true || second == "" || second == first || !strings.Contains(res.Text, "again") {
		t.Fatalf("ssh-keygen's second prompt: %v\n%s", res.S, res.Text)
	}
	// The first prompt's link is spent; the second prompt is another.
	b.Open("about:blank")
	b.Open(first)
	b.WaitJS(`ptySecret.state === "refused" && ptySecret.code === "secret_link_used"`, 15*time.Second)
	enterSecret(t, b, second, strings.TrimSpace(lastLine(res.str("viewport"))), phrase, "")
	res = r.call(tools.TerminalWait, obj{"sessionId": id})
	if res.S["secretEntered"] != true {
		t.Fatalf("ssh-keygen after the second passphrase: %v\n%s", res.S, res.Text)
	}
	if _, err := os.Stat(key + ".pub"); err != nil {
		t.Fatalf("no key written: %v\n%s", err, res.Text)
	}
	res = r.call(tools.TerminalSend, obj{"sessionId": id, "text": "ssh-keygen -y -f " + key})
	third := res.str("secretUrl")
	if third == "" {
		t.Fatalf("the key asks for no passphrase (it was not set): %v\n%s", res.S, res.Text)
	}
	enterSecret(t, b, third, strings.TrimSpace(lastLine(res.str("viewport"))), phrase, "")
	if res = r.call(tools.TerminalWait, obj{"sessionId": id, "pattern": "secret-test"}); !strings.Contains(res.Text, "ssh-ed25519 ") {
		t.Fatalf("the key read back with the passphrase typed: %v\n%s", res.S, res.Text)
	}

	// The live view shows the session, and none of the secrets.
	b.Open(r.base + "/s/" + id)
	b.WaitJS(`window.ptyView && ptyView.connected && `+bufferText+`.includes("ssh-ed25519")`, 15*time.Second)
	var screen string
	b.Eval(bufferText, &screen)
	for _, s := range []string{pw, pw2, phrase} {
		if strings.Contains(screen, s) {
			t.Errorf("the live view shows the secret %q", s)
		}
		r.nowhere(s, "ssh-ed25519")
	}
	withinPolicy(t, b)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return lines[len(lines)-1]
}

// Over HTTP the secret links name the -http listener, and the bearer
// token is the console's login: the page's API takes the secret with it,
// and refuses it without.
func TestHTTPSecretLink(t *testing.T) {
	s := httpServer(t)
	c := httpClient(t, s)
	id := c.ok(tools.TerminalOpen, nil).str("sessionId")
	res := c.send(id, `read -s -p 'pw: ' pw; echo; echo len=${#pw}`)
	link := res.str("secretUrl")
	prefix := "http://" + s.addr + "/secret/" + id + "#token="
	if !strings.HasPrefix(link, prefix) {
		t.Fatalf("secret link %q, want %s...\n%s", link, prefix, res.Text)
	}
	post := func(bearer bool) int {
		t.Helper()
		body, _ := json.Marshal(obj{"token": strings.TrimPrefix(link, prefix), "secret": "over-http-pw"})
		req, _ := http.NewRequestWithContext(testkit.Ctx(t), http.MethodPost, "http://"+s.addr+"/api/secret/"+id, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if bearer {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post(false); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", code)
	}
	if code := post(true); code != http.StatusNoContent {
		t.Fatalf("with the token: %d", code)
	}
	res = c.ok(tools.TerminalWait, obj{"sessionId": id, "pattern": `len=[0-9]+\s`})
	if !strings.Contains(res.Text, "len=12") || res.S["secretEntered"] != true || strings.Contains(res.Text, "over-http-pw") {
		t.Fatalf("the wait after the secret: %v\n%s", res.S, res.Text)
	}
}
