package test

import (
	"os"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// Item 2: the shell's environment is the parent's minus secrets (by name and
// by value shape) and the runtime's own variables, plus the agent-safe
// defaults, plus the trusted map.
func TestSecretsScrubbed(t *testing.T) {
	const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAzTESTONLYnotarealkey\n-----END RSA PRIVATE KEY-----"
	secrets := map[string]string{
		"MY_API_KEY":        "apikey-value-1f2e",
		"DB_PASSWORD":       "db-password-value-9c8b",
		"GITHUB_TOKEN":      "token-value-7a6d",
		"secret_thing":      "lowercase-secret-value-5e4f",
		"PTYACTOR_INTERNAL": "runtime-internal-value-3c2b",
		"X1":                "ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"X2":                "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"X3":                "AKIAIOSFODNN7EXAMPLE",
		"X4":                "xoxb-1234567890-abcdefghijkl",
		"X5":                "sk-proj-0123456789abcdefABCDEF",
		"X6":                pem,
	}
	parent := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		runVar + "=" + runID,
		"KEEP=ok",
		"TERM=xterm-256color", // the defaults win over the parent
		"PAGER=less",
	}
	for k, v := range secrets {
		parent = append(parent, k+"="+v)
	}
	h := newHarness(t, testkit.PTYConfig(), local.Options{
		ParentEnv: func() []string { return parent },
		// The trusted map may re-add a scrubbed name.
		Env: map[string]string{"DB_PASSWORD": "trusted-db-password"},
	})
	id := h.spawn(messages.SpawnRequest{}).ID()
	res := h.prompt(id, "env", 0)
	env := map[string]string{}
	for _, l := range lines(res.Viewport) {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	for k, v := range secrets {
		if k == "DB_PASSWORD" {
			continue
		}
		if got, ok := env[k]; ok {
			t.Errorf("secret %s reached the shell: %q", k, got)
		}
		first, _, _ := strings.Cut(v, "\n")
		if strings.Contains(res.Viewport, first) {
			t.Errorf("the value of %s reached the shell", k)
		}
	}
	if strings.Contains(res.Viewport, "PRIVATE KEY") || strings.Contains(res.Viewport, "MIIEpAIBAAKCAQEA") {
		t.Error("the PEM private key reached the shell")
	}
	if strings.Contains(res.Viewport, secrets["DB_PASSWORD"]) {
		t.Error("the parent's DB_PASSWORD reached the shell")
	}
	want := map[string]string{
		"KEEP":        "ok",
		"TERM":        "xterm-256color",
		"PAGER":       "cat",
		"GIT_PAGER":   "cat",
		"GIT_EDITOR":  ":",
		"MANPAGER":    "cat",
		"DB_PASSWORD": "trusted-db-password",
		runVar:        runID,
		tagVar:        h.tag,
	}
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("env %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if t.Failed() {
		t.Logf("env output:\n%s", res.Viewport)
	}

	// The prompt machinery (and its nonce) is not in a child's environment.
	res = h.prompt(id, "env | grep -c -e PROMPT_COMMAND -e '^PS1='", 1)
	if !hasLine(res.Viewport, "0") {
		t.Fatalf("PROMPT_COMMAND or PS1 is exported to children: viewport %q", res.Viewport)
	}
	res = h.prompt(id, `bash --norc --noprofile -c 'echo "pc:${PROMPT_COMMAND:-none}:ps1:${PS1:-none}"'`, 0)
	if !hasLine(res.Viewport, "pc:none:ps1:none") {
		t.Fatalf("a child sees the prompt variables: viewport %q", res.Viewport)
	}
}
