package adversarial

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/tools"
)

// recorder keeps every result the model got, to grep them.
type recorder struct {
	*MCP
	mu  sync.Mutex
	all []string
}

func (r *recorder) ok(name string, args map[string]any) Result {
	r.t.Helper()
	res := r.OK(name, args)
	b, _ := json.Marshal(res.S)
	r.mu.Lock()
	r.all = append(r.all, res.Text, string(b))
	r.mu.Unlock()
	return res
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.all, "\n")
}

// A secret page, attacked: its API is refused without the console's
// login (401, nothing typed), from a foreign origin (403), and with a
// wrong token (403); logged in, the secret is typed once, and the link
// replayed is refused (410) and types nothing. The secret's bytes are in
// no result the model got (the send, the wait, the screen, the read), no
// line of the server's log, no frame of a live view (an operator's and a
// share link's, following from the start), and no file the server wrote
// (its records, its state and config folders).
func TestSecretPageAttacked(t *testing.T) {
	s := Start(t, Options{})
	c := &recorder{MCP: s.MCP()}
	id := c.ok(tools.TerminalOpen, nil).Str("sessionId")
	cookie := s.Login()
	op, err := s.Watch(ctx(t), id, "", DialOptions{Cookie: cookie})
	if err != nil {
		t.Fatal(err)
	}
	opText, _ := op.Drain(ctx(t))
	share, _ := c.Share(id, map[string]any{"label": "secret"})
	lk, err := s.Watch(ctx(t), id, share, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	linkText, _ := lk.Drain(ctx(t))

	const secret = "s3cr3t-Adversarial-9e8d7c"
	res := c.ok(tools.TerminalSend, map[string]any{"sessionId": id, "text": `read -s -p 'pw: ' pw; echo; echo len=${#pw}`})
	link := res.Str("secretUrl")
	prefix := s.URL("/secret/" + id + "#token=")
	if !strings.HasPrefix(link, prefix) {
		t.Fatalf("secret link %q, want %s…\n%s", link, prefix, res.Text)
	}
	token := strings.TrimPrefix(link, prefix)
	body := func(tok, sec string) []byte {
		b, _ := json.Marshal(map[string]string{"token": tok, "secret": sec})
		return b
	}
	api := "/api/secret/" + id
	jsonHdr := []string{"Content-Type", "application/json", "Origin", s.Origin()}

	for _, tc := range []struct {
		what   string
		path   string
		b      []byte
		hdr    []string
		status int
	}{
		{"the prompt without the login", api + "/prompt", body(token, ""), jsonHdr, http.StatusUnauthorized},
		{"the secret without the login", api, body(token, "typed-without-login"), jsonHdr, http.StatusUnauthorized},
		{"the secret from a foreign origin", api, body(token, "typed-cross-site"), []string{"Content-Type", "application/json", "Origin", "http://evil.example", "Cookie", CookieHeader(cookie)}, http.StatusForbidden},
		{"a wrong token, logged in", api, body(strings.Repeat("A", 22), "typed-with-a-guess"), append(jsonHdr, "Cookie", CookieHeader(cookie)), http.StatusForbidden},
		{"a share link's token, logged in", api, body(share, "typed-with-a-share"), append(jsonHdr, "Cookie", CookieHeader(cookie)), http.StatusForbidden},
	} {
		if r := s.Do(http.MethodPost, tc.path, tc.b, tc.hdr...); r.Status != tc.status {
			t.Errorf("%s: HTTP %d %q; want %d", tc.what, r.Status, r.Body, tc.status)
		}
	}
	// Logged in: the prompt, then the secret, once.
	withLogin := append(jsonHdr, "Cookie", CookieHeader(cookie))
	if r := s.Do(http.MethodPost, api+"/prompt", body(token, ""), withLogin...); r.Status != http.StatusOK || !strings.Contains(r.Body, "pw:") {
		t.Fatalf("the prompt, logged in: HTTP %d %q", r.Status, r.Body)
	}
	if r := s.Do(http.MethodPost, api, body(token, secret), withLogin...); r.Status != http.StatusNoContent {
		t.Fatalf("the secret, logged in: HTTP %d %q", r.Status, r.Body)
	}
	if r := s.Do(http.MethodPost, api, body(token, secret+"-replayed"), withLogin...); r.Status != http.StatusGone || !strings.Contains(r.Body, "secret_link_used") {
		t.Fatalf("the link replayed: HTTP %d %q", r.Status, r.Body)
	}
	w := c.ok(tools.TerminalWait, map[string]any{"sessionId": id, "pattern": `len=[0-9]+\s`})
	if !strings.Contains(w.Text, "len="+strconv.Itoa(len(secret))) || w.S["secretEntered"] != true {
		t.Fatalf("the wait after the secret: %v\n%s", w.S, w.Text)
	}
	// None of the refused tries was typed: the program read one line,
	// the secret's.
	c.ok(tools.TerminalSend, map[string]any{"sessionId": id, "text": "echo after-$((6*6))"})
	c.ok(tools.TerminalScreen, map[string]any{"sessionId": id})
	c.ok(tools.TerminalRead, map[string]any{"sessionId": id})
	waitFor(t, 15*time.Second, "both viewers see the command after the secret", func() bool {
		return strings.Contains(opText(), "after-36") && strings.Contains(linkText(), "after-36")
	})
	c.ok(tools.TerminalClose, map[string]any{"sessionId": id})

	for _, bad := range []string{secret, "typed-without-login", "typed-cross-site", "typed-with-a-guess", "typed-with-a-share", "-replayed"} {
		if strings.Contains(c.text(), bad) {
			t.Errorf("%q is in a result the model got", bad)
		}
		if strings.Contains(s.Stderr(), bad) {
			t.Errorf("%q is in the server's log", bad)
		}
		if strings.Contains(opText(), bad) || strings.Contains(linkText(), bad) {
			t.Errorf("%q is in a live view's stream", bad)
		}
	}
	// Every file the server wrote: its records (once the close wrote
	// them out), its state and config.
	waitFor(t, 15*time.Second, "a record holding the command after the secret", func() bool {
		return grepTree(t, s.StateHome, "after-36")
	})
	for _, bad := range []string{secret, token} {
		for _, dir := range []string{s.Home, s.Workdir} {
			if grepTree(t, dir, bad) {
				t.Errorf("%q is in a file under %s", bad, dir)
			}
		}
	}
}

// grepTree reports whether any file under dir holds needle.
func grepTree(t *testing.T, dir, needle string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), needle) {
			t.Logf("%q found in %s", tail(needle, 12), p)
			found = true
		}
		return nil
	})
	return found
}
