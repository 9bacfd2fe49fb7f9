package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// At a secret prompt with a link, the model is told not to type the
// secret and to give its user the link; without one, to ask the user; a
// person's entry says so; the link and the line fit a small bound.
func TestRenderSecretLink(t *testing.T) {
	p := &messages.SecretPrompt{Session: "pty-1", Line: "[sudo] password for ada: "}
	r := messages.SendResult{Viewport: "$ sudo true\n[sudo] password for ada: ", WaitReason: messages.WaitStdinRead, Reader: "sudo", Status: messages.Running, Secret: true, SecretPrompt: p}
	const u = "http://127.0.0.1:1234/secret/pty-1#token=abc"
	got := renderSendLink(r, u, 1000)
	for _, want := range []string{
		`[secret prompt: The terminal waits for a secret ("[sudo] password for ada:"). Do not type it yourself: give the user this link to type it: ` + u + ` (it needs their console login). Then call terminal_wait.]`,
		"[reader: sudo]", "[wait: stdin_read]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("with a link, no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ask the user to type it, never type") {
		t.Errorf("with a link, the text without one:\n%s", got)
	}
	got = renderSend(r, 1000)
	if !strings.Contains(got, "[secret prompt: it waits for a password or passphrase with echo off; ask the user to type it, never type a credential yourself]") || strings.Contains(got, "#token=") {
		t.Errorf("without a link:\n%s", got)
	}
	entered := messages.SendResult{Viewport: "len=7\n$ ", WaitReason: messages.WaitStdinRead, Status: messages.Running, SecretEntered: true}
	if got := renderSend(entered, 1000); !strings.Contains(got, "\n[secret entered: A person entered the secret at the prompt.]") || strings.Contains(got, "[secret prompt") {
		t.Errorf("after a person's secret:\n%s", got)
	}
	// A long viewport under a small bound keeps the link whole.
	r.Viewport = strings.Repeat("x", 5000)
	got = renderSendLink(r, u, 600)
	if len(got) > 600 || !strings.Contains(got, u+" (it needs their console login)") {
		t.Errorf("bounded (%d bytes):\n%s", len(got), got)
	}
}

// Through the toolset with a real shell: a send at read -s carries
// secretUrl from Options.SecretLink (made for the result's prompt and its
// owner); once a person entered the secret, the wait's result says so;
// with RefuseSecretInput the model's own text is still refused, and told
// where the link is.
func TestToolsSecretLink(t *testing.T) {
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{local.New(local.Options{})}})
	owner := testkit.Owner(t, svc, "agent")
	var mu sync.Mutex
	var asked []messages.SecretPrompt
	link := func(o messages.Owner, p messages.SecretPrompt) (string, error) {
		if o != owner {
			return "", errors.New("another owner")
		}
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, p)
		return "http://console.test/secret/" + string(p.Session) + "#token=t" + string(rune('0'+len(asked))), nil
	}
	ts, err := New(svc, Options{SecretLink: link, RefuseSecretInput: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Ctx(t)
	call := toolCaller(t, ts, owner, 30*time.Second)
	id := openTerminal(t, call)
	r := call(TerminalSend, map[string]any{"sessionId": id, "text": `read -s -p 'pw: ' pw; echo; echo len=${#pw}`})
	v, ok := r.Structured.(ForegroundSendValue)
	if r.IsError || !ok || !v.Secret || v.SecretURL != "http://console.test/secret/"+id+"#token=t1" {
		t.Fatalf("at the prompt: %v\n%s", r.Structured, r.Text)
	}
	if !strings.Contains(r.Text, `The terminal waits for a secret ("pw:"). Do not type it yourself: give the user this link to type it: `+v.SecretURL) {
		t.Fatalf("the text at the prompt:\n%s", r.Text)
	}
	mu.Lock()
	p := asked[0]
	mu.Unlock()
	if p.Session != messages.SessionID(id) || p.Line != "pw:" || p.TID == 0 {
		t.Fatalf("the link was made for %+v", p)
	}
	// The model's own text at the prompt: refused, pointing at the link.
	r = call(TerminalSend, map[string]any{"sessionId": id, "text": "hunter2"})
	if !r.IsError || !errors.Is(r.Err, ErrSecretPrompt) || !strings.Contains(r.Text, "secretUrl") {
		t.Fatalf("the model's text at the prompt: %q (%v)", r.Text, r.Err)
	}
	// A person types it (what the console's page does).
	if err := svc.Session(owner, messages.SessionID(id)).EnterSecret(ctx, p, []byte("hunter2")); err != nil {
		t.Fatal(err)
	}
	r = call(TerminalWait, map[string]any{"sessionId": id, "pattern": "len="})
	v, _ = r.Structured.(ForegroundSendValue)
	if r.IsError || !v.SecretEntered || v.Secret || v.SecretURL != "" || !strings.Contains(r.Text, "len=7") ||
		!strings.Contains(r.Text, "A person entered the secret at the prompt.") || strings.Contains(r.Text, "hunter2") {
		t.Fatalf("after the person's secret: %+v\n%s", v, r.Text)
	}
	b, _ := json.Marshal(r.Structured)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `"secretEntered":true`) {
		t.Fatalf("the value: %s", b)
	}
}
