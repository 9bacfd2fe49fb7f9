package wire

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

// A secret prompt's wait crosses the wire whole, in a result and in
// EnterSecret; EnterSecret names the prompt by the host's id of the
// session whatever the client's prompt said; a result without one has
// none.
func TestSecretConversionsRoundTrip(t *testing.T) {
	p := messages.SecretPrompt{Session: "pty-host", Pgid: 4242, TID: 4243, InputSeq: 1 << 40, Reader: "sudo", Line: "[sudo] password for ada:"}
	res := SendResultFrom(marshalled(t, SendResultTo(messages.SendResult{Secret: true, SecretPrompt: &p, SecretEntered: true})))
	if !res.Secret || !res.SecretEntered || res.SecretPrompt == nil || *res.SecretPrompt != p {
		t.Fatalf("result: secret %v, entered %v, prompt %+v; want %+v", res.Secret, res.SecretEntered, res.SecretPrompt, p)
	}
	if r := SendResultFrom(marshalled(t, SendResultTo(messages.SendResult{}))); r.SecretPrompt != nil || r.SecretEntered {
		t.Fatalf("a result at no secret prompt: %+v %v", r.SecretPrompt, r.SecretEntered)
	}
	if SecretPromptTo(nil) != nil || SecretPromptFrom(nil) != nil {
		t.Fatal("nil must stay nil")
	}

	client := p
	client.Session = "pty-client"
	req := marshalled(t, &Request{Call: 1, Body: &Request_EnterSecret{EnterSecret: EnterSecretTo("pty-host", client, []byte("hunter2"))}})
	got, secret := EnterSecretFrom(req.GetEnterSecret())
	if got != p || string(secret) != "hunter2" || req.Session() != "pty-host" {
		t.Fatalf("enter secret: %+v %q on %q; want %+v on pty-host", got, secret, req.Session(), p)
	}
	if got, secret := EnterSecretFrom(&EnterSecret{Session: "s"}); got != (messages.SecretPrompt{}) || secret != nil {
		t.Fatalf("no prompt: %+v %q", got, secret)
	}
}

// SECRET_PROMPT_GONE keeps its class, and names the client's session.
func TestSecretPromptGoneKeepsItsClass(t *testing.T) {
	err := messages.Errorf(messages.CodeSecretPromptGone, "the secret prompt of sudo in PTY session pty-host no longer waits: nothing was written")
	got := ErrorFrom(Renamed(roundTrip(t, ErrorTo(err)), "pty-host", "pty-client"))
	if !errors.Is(got, messages.ErrSecretPromptGone) || strings.Contains(got.Error(), "pty-host") || !strings.Contains(got.Error(), "pty-client") {
		t.Fatalf("%q: class lost, or the host's id kept", got)
	}
	var me *messages.Error
	if !errors.As(got, &me) || me.Code != messages.CodeSecretPromptGone {
		t.Fatalf("coded error: %#v", me)
	}
}

// No rendering of a request, its body or EnterSecret shows the secret.
func TestSecretsAreNeverFormatted(t *testing.T) {
	const secret = "hunter2-secret-value"
	es := EnterSecretTo("pty-1", messages.SecretPrompt{Reader: "sudo"}, []byte(secret))
	req := &Request{Call: 1, Body: &Request_EnterSecret{EnterSecret: es}}
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, nil))
	log.Info("x", "req", req, "body", req.GetBody(), "es", es)
	fmt.Fprintf(&b, "%v %s %+v %v %+v %#v", req, req, req.GetBody(), es, es, es)
	if strings.Contains(b.String(), secret) || strings.Contains(b.String(), fmt.Sprint([]byte(secret))) {
		t.Fatalf("a secret was printed: %s", b.String())
	}
	if !strings.Contains(fmt.Sprint(es), "[redacted]") {
		t.Fatalf("EnterSecret renders %s", es)
	}
}
