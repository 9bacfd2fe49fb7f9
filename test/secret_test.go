package test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// A person's secret at a secret prompt: the result names the prompt's
// wait; the secret goes in once, only at that wait (a later prompt of the
// same program is a new one), and the agent's next result says a person
// entered it, never what.
func TestEnterSecretAtThePrompt(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	sp := h.spawn(messages.SpawnRequest{})
	ctx := testkit.Ctx(t)
	// Secrets of this run only (7 and 11 characters), so a match anywhere
	// is this test's.
	secret1, secret2 := randHex(4)[:7], randHex(6)[:11]
	res := h.send(sp.ID(), `read -s -p 'pw1: ' a; echo; read -s -p 'pw2: ' b; echo; echo "lengths ${#a} ${#b}"`)
	if !res.Secret || res.SecretPrompt == nil {
		t.Fatalf("not at a secret prompt: %+v", res)
	}
	first := *res.SecretPrompt
	if first.Line != "pw1:" || first.TID == 0 || first.Session != sp.ID() {
		t.Fatalf("prompt %+v", first)
	}
	if err := sp.EnterSecret(ctx, first, []byte(secret1)); err != nil {
		t.Fatal(err)
	}
	res, err := sp.Wait(ctx, messages.WaitPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SecretEntered || !res.Secret || res.SecretPrompt == nil || res.SecretPrompt.Line != "pw2:" {
		t.Fatalf("after the first secret: %+v", res)
	}
	// The first prompt's wait is over: its link is dead, even though the
	// same program waits at a secret prompt again.
	if err := sp.EnterSecret(ctx, first, []byte("again")); !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a second secret at the first prompt: %v", err)
	}
	if err := sp.EnterSecret(ctx, *res.SecretPrompt, []byte(secret2)); err != nil {
		t.Fatal(err)
	}
	res, err = sp.Wait(ctx, messages.WaitPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasLine(res.Viewport, "lengths 7 11") || !res.SecretEntered || res.Secret {
		t.Fatalf("after the second secret: %+v", res)
	}
	rd, err := sp.Read(ctx, messages.ReadRequest{})
	if err != nil || strings.Contains(rd.Text, secret1) || strings.Contains(rd.Text, secret2) {
		t.Fatalf("the secret is in the transcript: %v %q", err, rd.Text)
	}
	// Nor in any process's arguments or environment: it went through the
	// terminal only.
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && (bytes.Contains(b, []byte(secret1)) || bytes.Contains(b, []byte(secret2))) {
				t.Fatalf("a secret in %s/%s: %q", dir, f, b)
			}
		}
	}
	// At the shell's prompt there is no secret prompt to answer.
	if err := sp.EnterSecret(ctx, first, []byte("x")); !errors.Is(err, messages.ErrSecretPromptGone) {
		t.Fatalf("a secret at the shell's prompt: %v", err)
	}
}
