package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// The links themselves: one entry at a time, spent for every link to the
// prompt once a secret went in (Done closed), dead once the prompt was
// gone, refused after their time, for another session, and beyond the
// bound the first to expire goes.
func TestSecretLinks(t *testing.T) {
	now := time.Now()
	s := NewSecrets(func() time.Time { return now })
	o := messages.NewOwner("agent")
	p := messages.SecretPrompt{Session: "pty-1", Pgid: 10, TID: 11, InputSeq: 5, Reader: "sudo", Line: "[sudo] password for ada:"}
	a, err := s.Mint(o, p, false)
	if err != nil || len(a) < 22 {
		t.Fatalf("mint: %q, %v", a, err)
	}
	b, _ := s.Mint(o, p, true)
	next := p
	next.InputSeq = 6
	c, _ := s.Mint(o, next, false)
	if l, err := s.Check(a, "pty-1"); err != nil || l.Prompt != p || l.Standalone || l.Owner != o {
		t.Fatalf("check: %+v, %v", l, err)
	}
	for _, bad := range []struct{ token, session string }{{a, "pty-2"}, {strings.Repeat("A", 22), "pty-1"}, {"", "pty-1"}} {
		if _, err := s.Check(bad.token, messages.SessionID(bad.session)); !errors.Is(err, ErrSecretLinkRefused) {
			t.Fatalf("check %q for %s: %v", bad.token, bad.session, err)
		}
	}
	if _, err := s.claim(a, "pty-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.claim(a, "pty-1"); !errors.Is(err, ErrSecretLinkBusy) {
		t.Fatalf("a second claim while the first writes: %v", err)
	}
	done := s.Done(b)
	select {
	case <-done:
		t.Fatal("done before any secret went in")
	default:
	}
	s.release(a, true)
	<-done // the other link to the same prompt is spent too
	for _, tok := range []string{a, b} {
		if _, err := s.Check(tok, "pty-1"); !errors.Is(err, ErrSecretLinkUsed) {
			t.Fatalf("a spent link: %v", err)
		}
	}
	// Another prompt's link is not.
	if _, err := s.Check(c, "pty-1"); err != nil {
		t.Fatalf("the next prompt's link: %v", err)
	}
	if _, err := s.claim(c, "pty-1"); err != nil {
		t.Fatal(err)
	}
	s.release(c, false)
	if _, err := s.Check(c, "pty-1"); !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a dead link: %v", err)
	}
	if s.Done(strings.Repeat("A", 22)) != nil {
		t.Fatal("Done of no link is not nil")
	}
	d, _ := s.Mint(o, next, true)
	if !s.Revoke(d) || s.Revoke(d) {
		t.Fatal("revoke: live once")
	}
	if _, err := s.Check(d, "pty-1"); !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a revoked link: %v", err)
	}
	e, _ := s.Mint(o, next, false)
	now = now.Add(SecretLinkTTL + time.Second)
	if _, err := s.Check(e, "pty-1"); !errors.Is(err, ErrSecretLinkRefused) {
		t.Fatalf("an expired link: %v", err)
	}
	if _, err := s.Mint(o, messages.SecretPrompt{}, false); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("a prompt of no session: %v", err)
	}
	// The bound: the oldest goes first.
	first, _ := s.Mint(o, p, false)
	for range MaxSecretLinks {
		now = now.Add(time.Millisecond)
		if _, err := s.Mint(o, p, false); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	n := s.store.len()
	s.mu.Unlock()
	if n != MaxSecretLinks {
		t.Fatalf("%d links kept, want %d", n, MaxSecretLinks)
	}
	if _, err := s.Check(first, "pty-1"); !errors.Is(err, ErrSecretLinkRefused) {
		t.Fatalf("the oldest link past the bound: %v", err)
	}
}

// The JSON decoder of a secret: escapes as JSON has them, into bytes.
func TestSecretBytes(t *testing.T) {
	for in, want := range map[string]string{
		`"hunter2"`:               "hunter2",
		`"a\"b\\c\/d"`:            `a"b\c/d`,
		`"\u00e9t\u00E9"`:         "été",
		`"\ud83d\ude00!"`:         "😀!",
		`"p\u0007"`:               "p\a",
		`"ünïcode ☃"`:             "ünïcode ☃",
		`"\ud83d"`:                "\uFFFD",
		`"tab\there\nline\r\b\f"`: "tab\there\nline\r\b\f",
	} {
		var b secretBytes
		if err := json.Unmarshal([]byte(in), &b); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", in, b, err, want)
		}
	}
	for _, in := range []string{`12`, `null`, `["x"]`} {
		var b secretBytes
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("%s decoded as a secret: %q", in, b)
		}
	}
	for in, ok := range map[string]bool{"hunter2": true, "": false, "a\rb": false, "a\nb": false, "\x03": false, "x\x7f": false, "été": true, strings.Repeat("x", MaxSecretBytes): true, strings.Repeat("x", MaxSecretBytes+1): false} {
		if err := checkSecret([]byte(in)); (err == nil) != ok {
			t.Errorf("checkSecret(%q): %v", in, err)
		}
	}
}

// syncWriter is a log the server writes from its handlers.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// post posts body as JSON to path, with the operator's bearer or none,
// and returns the status and the decoded answer.
func (s *served) post(path string, bearer bool, body any, origin string) (int, map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(testkit.Ctx(s.t), http.MethodPost, s.srv.URL+path, bytes.NewReader(b))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if bearer {
		req.Header.Set("Authorization", "Bearer "+opToken)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m
}

// A person types a secret at a real read -s through the page's API: the
// link needs the console login, works once, and a link to a prompt that
// no longer waits is dead; a standalone link needs only its token, and
// closes Done. The secret is never in the server's log.
func TestSecretPage(t *testing.T) {
	logs := &syncWriter{}
	secrets := NewSecrets(nil)
	s := serveWith(t, local.Options{}, func(o *Options) {
		o.Secrets = secrets
		o.Log = zerolog.New(logs)
		o.Assets = fstest.MapFS{"secret.html": {Data: []byte("secret page")}}
	})
	ctx := testkit.Ctx(t)
	id := string(s.sh.ID())
	res, err := s.sh.Send(ctx, messages.SendRequest{Text: `read -s -p 'pw: ' pw; echo; echo len=${#pw}; read -s -p 'again: ' pw2; echo; echo len2=${#pw2}`, Submit: true})
	if err != nil || !res.Secret || res.SecretPrompt == nil {
		t.Fatalf("not at a secret prompt: %+v, %v", res, err)
	}
	first := *res.SecretPrompt
	tok, err := secrets.Mint(s.owner, first, false)
	if err != nil {
		t.Fatal(err)
	}

	// The page.
	page, err := http.Get(s.srv.URL + "/secret/" + id)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || string(body) != "secret page" || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET /secret: %d %q %v", page.StatusCode, body, page.Header)
	}

	refused := func(why string, status int, code string, bearer bool, path string, body any, origin string) {
		t.Helper()
		got, m := s.post(path, bearer, body, origin)
		if got != status || (code != "" && m["code"] != code) {
			t.Fatalf("%s: %d %v; want %d %s", why, got, m, status, code)
		}
	}
	const pw = "correct-horse-battery"
	prompt, enter := "/api/secret/"+id+"/prompt", "/api/secret/"+id
	refused("the prompt without the login", http.StatusUnauthorized, "not_logged_in", false, prompt, obj{"token": tok}, "")
	refused("a secret without the login", http.StatusUnauthorized, "not_logged_in", false, enter, obj{"token": tok, "secret": pw}, "")
	refused("a wrong token", http.StatusForbidden, "forbidden", true, enter, obj{"token": strings.Repeat("A", 22), "secret": pw}, "")
	refused("another session", http.StatusForbidden, "forbidden", true, "/api/secret/pty-other", obj{"token": tok, "secret": pw}, "")
	refused("an empty secret", http.StatusBadRequest, "bad_secret", true, enter, obj{"token": tok, "secret": ""}, "")
	refused("a secret with Enter in it", http.StatusBadRequest, "bad_secret", true, enter, obj{"token": tok, "secret": "a\nrm -rf x"}, "")
	refused("not JSON", http.StatusBadRequest, "bad_request", true, enter, "x", "")
	refused("too large", http.StatusRequestEntityTooLarge, "bad_request", true, enter, obj{"token": tok, "secret": strings.Repeat("x", maxSecretBody)}, "")
	refused("another origin", http.StatusForbidden, "", true, enter, obj{"token": tok, "secret": pw}, "https://evil.example")

	code, m := s.post(prompt, true, obj{"token": tok}, "")
	if code != http.StatusOK || m["line"] != "pw:" || m["reader"] != first.Reader || m["name"] != "build" || m["session"] != id {
		t.Fatalf("the prompt: %d %v", code, m)
	}
	if code, m := s.post(enter, true, obj{"token": tok, "secret": pw}, s.srv.URL); code != http.StatusNoContent {
		t.Fatalf("the secret: %d %v", code, m)
	}
	res, err = s.sh.Wait(ctx, messages.WaitPolicy{})
	if err != nil || !res.SecretEntered || !strings.Contains(res.Viewport, "len=21") || !res.Secret || res.SecretPrompt == nil {
		t.Fatalf("after the secret: %+v, %v", res, err)
	}
	refused("the link again", http.StatusGone, "secret_link_used", true, enter, obj{"token": tok, "secret": pw}, "")
	refused("the used link's prompt", http.StatusGone, "secret_link_used", true, prompt, obj{"token": tok}, "")

	// A link to the first prompt, made now: the program asks again (a new
	// prompt), so it is dead, and stays so.
	late, _ := secrets.Mint(s.owner, first, false)
	refused("a gone prompt", http.StatusGone, "secret_prompt_gone", true, enter, obj{"token": late, "secret": pw}, "")
	refused("a dead link", http.StatusGone, "secret_prompt_gone", true, enter, obj{"token": late, "secret": pw}, "")

	// A standalone link: its token alone.
	alone, _ := secrets.Mint(s.owner, *res.SecretPrompt, true)
	done := secrets.Done(alone)
	if code, m := s.post(prompt, false, obj{"token": alone}, ""); code != http.StatusOK || m["line"] != "again:" {
		t.Fatalf("a standalone link's prompt: %d %v", code, m)
	}
	if code, m := s.post(enter, false, obj{"token": alone, "secret": "é\"x"}, ""); code != http.StatusNoContent {
		t.Fatalf("a standalone link's secret: %d %v", code, m)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the secret")
	}
	res, err = s.sh.Wait(ctx, messages.WaitPolicy{})
	if err != nil || !res.SecretEntered || !strings.Contains(res.Viewport, "len2=3") || res.Secret {
		t.Fatalf("after the second secret: %+v, %v", res, err)
	}
	if strings.Contains(logs.String(), pw) || strings.Contains(logs.String(), tok) || !strings.Contains(logs.String(), `"status":401`) {
		t.Fatalf("the log:\n%s", logs.String())
	}
	// No secret routes without Options.Secrets.
	plain := serve(t)
	if code, m := plain.post("/api/secret/"+string(plain.sh.ID()), true, obj{"token": tok, "secret": pw}, ""); code != http.StatusNotFound {
		t.Fatalf("without Secrets: %d %v", code, m)
	}
}

type obj = map[string]any
