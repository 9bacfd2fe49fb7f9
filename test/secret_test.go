//go:build linux

package test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A program that reads a line with echo off (getpass, read -s, ssh-keygen
// and openssl passphrases) is a secret prompt; a prompt that echoes (read
// -p, input()) is not. Each is answered so the session returns to its
// prompt.
func TestSecretPrompts(t *testing.T) {
	requireProgram(t, "ssh-keygen", "openssh-client")
	requireProgram(t, "openssl", "openssl")
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	dir := t.TempDir()
	id := h.spawn(messages.SpawnRequest{Cwd: dir}).ID()
	cases := []struct {
		name, cmd string
		secret    bool
		answer    string // typed to finish the prompt
	}{
		{"getpass", `python3 -c 'import getpass; print(len(getpass.getpass("pw: ")))'`, true, "hunter2"},
		{"read -s", `read -r -s -p "pw: " pw; echo; echo "${#pw}"`, true, "hunter2"},
		{"ssh-keygen", `ssh-keygen -q -t ed25519 -f ` + filepath.Join(dir, "key"), true, ""},
		{"openssl", `openssl genpkey -algorithm ed25519 -aes-256-cbc -out ` + filepath.Join(dir, "k.pem"), true, ""},
		{"read -p", `read -r -p "name: " n; echo "hi $n"`, false, "ada"},
		{"input", `python3 -c 'print("got", input("name: "))'`, false, "ada"},
	}
	for _, c := range cases {
		res := h.send(id, c.cmd)
		if res.WaitReason != messages.WaitStdinRead || res.Secret != c.secret {
			t.Fatalf("%s: %s secret %v, want stdin_read secret %v; viewport %q", c.name, res.WaitReason, res.Secret, c.secret, res.Viewport)
		}
		// Answer until the shell's prompt returns (passphrases are asked
		// twice, the second time secret too).
		for i := 0; res.ExitCode == nil; i++ {
			if i == 3 {
				t.Fatalf("%s: no prompt after three answers; viewport %q", c.name, res.Viewport)
			}
			res = h.send(id, c.answer)
			if res.ExitCode == nil && res.Secret != c.secret {
				t.Fatalf("%s: answer %d: secret %v; viewport %q", c.name, i, res.Secret, res.Viewport)
			}
		}
		if res.Secret {
			t.Fatalf("%s: the shell's prompt reported secret", c.name)
		}
	}
}

// With RefuseSecretInput, model text for a terminal at a secret prompt is
// refused with a reason, and nothing is written; a person's input through
// the facade still gets through.
func TestRefuseSecretInput(t *testing.T) {
	h := newHarness(t, testkit.PTYConfig(), local.Options{})
	ts, err := tools.New(h.svc, tools.Options{RefuseSecretInput: true})
	if err != nil {
		t.Fatal(err)
	}
	id := h.spawn(messages.SpawnRequest{}).ID()
	call := func(text string) tools.Result {
		args, _ := json.Marshal(map[string]any{"sessionId": id, "text": text})
		return ts.Call(testkit.Ctx(t), h.owner, tools.TerminalSend, args)
	}
	if r := call(`read -r -s -p "pw: " pw; echo "len ${#pw}"`); r.IsError || !r.Structured.(tools.ForegroundSendValue).Secret {
		t.Fatalf("prompt: %+v", r)
	}
	r := call("hunter2")
	if !r.IsError || !errors.Is(r.Err, tools.ErrSecretPrompt) {
		t.Fatalf("model text at a secret prompt: %+v, want ErrSecretPrompt", r)
	}
	// The person types it.
	res := h.send(id, "hunter2")
	if res.ExitCode == nil || !hasLine(res.Viewport, "len 7") {
		t.Fatalf("person's answer: %+v", res)
	}
	if r := call("echo after"); r.IsError {
		t.Fatalf("after the prompt: %+v", r)
	}
}
