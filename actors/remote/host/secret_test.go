package host_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ptyremote "github.com/ptyactor/ptyactor/actors/remote"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// A person's secret at a secret prompt, through a host: the result names
// the prompt's wait under the client's id; the host's session proves the
// wait still lasts and writes the secret there once; the agent's next
// result says a person entered one; the first prompt's wait is over when
// the program asks again (SECRET_PROMPT_GONE, named by the client's id).
// The secrets are in no result, no transcript, and neither the host's
// log nor the client's (both at debug).
func TestSecretThroughHost(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	logs := &lockedBuffer{}
	svc := testkit.Service(t, testkit.ServiceOptions{Log: zerolog.New(logs).Level(zerolog.DebugLevel), Tolerate: []error{messages.ErrHostLost}})
	if err := rc(svc).RegisterHost(testkit.Ctx(t), "h0", h.Addr(), nil, ptyremote.HostInsecure()); err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, testkit.Owner(t, svc, "test"), messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatal(err)
	}

	res, err := sh.Send(ctx, messages.SendRequest{Text: `read -s -p 'pw1: ' a; echo; read -s -p 'pw2: ' b; echo; echo "lengths ${#a} ${#b}"`, Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Secret || res.SecretPrompt == nil {
		t.Fatalf("not at a secret prompt: %+v", res)
	}
	first := *res.SecretPrompt
	if first.Line != "pw1:" || first.TID == 0 || first.Session != sh.ID() {
		t.Fatalf("prompt %+v; want pw1: of the client's %s", first, sh.ID())
	}
	secret := []byte("hunter2")
	if err := sh.EnterSecret(ctx, first, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret) != "\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("the caller's secret was not zeroed: %q", secret)
	}
	res, err = sh.Wait(ctx, messages.WaitPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SecretEntered || !res.Secret || res.SecretPrompt == nil || res.SecretPrompt.Line != "pw2:" || res.SecretPrompt.Session != sh.ID() {
		t.Fatalf("after the first secret: %+v (prompt %+v)", res, res.SecretPrompt)
	}
	// The first prompt's wait is over, though the same program waits at
	// a secret prompt again.
	err = sh.EnterSecret(ctx, first, []byte("again-9z"))
	if !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a second secret at the first prompt: %v, want ErrSecretPromptGone", err)
	}
	namesOnly(t, err, sh.ID())
	if err := sh.EnterSecret(ctx, *res.SecretPrompt, []byte("s3cret-pass")); err != nil {
		t.Fatal(err)
	}
	res, err = sh.Wait(ctx, messages.WaitPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasLine(res.Viewport, "lengths 7 11") || !res.SecretEntered || res.Secret || res.SecretPrompt != nil {
		t.Fatalf("after the second secret: %+v", res)
	}
	rd, err := sh.Read(ctx, messages.ReadRequest{})
	if err != nil || strings.Contains(rd.Text, "hunter2") || strings.Contains(rd.Text, "s3cret") || strings.Contains(rd.Text, "again-9z") {
		t.Fatalf("a secret is in the transcript: %v %q", err, rd.Text)
	}
	// At the shell's prompt there is no secret prompt to answer.
	if err := sh.EnterSecret(ctx, first, []byte("x")); !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a secret at the shell's prompt: %v", err)
	}
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	for name, log := range map[string]string{"host": h.Stderr(), "client": logs.String()} {
		for _, s := range []string{"hunter2", "s3cret-pass", "again-9z"} {
			if strings.Contains(log, s) || strings.Contains(log, strings.Trim(fmt.Sprint([]byte(s)), "[]")) {
				t.Fatalf("the %s's log has the secret %q:\n%s", name, s, log)
			}
		}
	}
}

// While the host is lost a secret fails with ErrHostLost at once, like
// every other request, and goes nowhere: the prompt was the host's.
func TestSecretHostLost(t *testing.T) {
	if isolate(t) {
		return
	}
	h, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	res, err := sh.Send(ctx, messages.SendRequest{Text: `read -s -p 'pw: ' a`, Submit: true})
	if err != nil || res.SecretPrompt == nil {
		t.Fatalf("not at a secret prompt: %+v %v", res, err)
	}
	h.Kill(t)
	testkit.WaitFor(t, 10*time.Second, "the host to be lost", func() bool {
		snap, err := sh.Describe(ctx)
		return err == nil && snap.Status.Exited && snap.Status.Cause == messages.CauseHostLost
	})
	if err := sh.EnterSecret(ctx, *res.SecretPrompt, []byte("hunter2")); !errors.Is(err, messages.ErrHostLost) {
		t.Fatalf("a secret for a lost host's session: %v, want ErrHostLost", err)
	}
	if _, err := sh.Close(ctx, "written off"); err != nil {
		t.Fatalf("close of a lost session: %v", err)
	}
}

// hasLine reports whether one of s's lines, trimmed, is want.
func hasLine(s, want string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}
