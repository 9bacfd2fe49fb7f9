package local

import (
	"slices"
	"strings"
	"testing"
)

func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("malformed entry %q", kv)
		}
		if _, dup := m[k]; dup {
			t.Fatalf("duplicate name %q in %q", k, env)
		}
		m[k] = v
	}
	return m
}

func TestBuildEnvScrubsSecretNamesInAnyCase(t *testing.T) {
	names := []string{
		"MY_API_KEY", "api_key", "KeyRing", "MONKEY", // KEY anywhere
		"DB_PASSWORD", "password", "Mysql_Password_File",
		"CLIENT_SECRET", "secret_thing", "SeCrEt",
		"GITHUB_TOKEN", "token", "NPM_TOKEN_X",
		"PTYACTOR_INTERNAL", "ptyactor_session", "Ptyactor_X", // the runtime's own
	}
	var parent []string
	for _, n := range names {
		parent = append(parent, n+"=innocent-looking-value")
	}
	parent = append(parent, "KEEP=ok", "PATH=/usr/bin:/bin", "HOME=/root", "XPTYACTOR_=kept")
	got := envMap(t, BuildEnv(parent, nil, nil))
	for _, n := range names {
		if v, ok := got[n]; ok {
			t.Errorf("%s=%q survived the scrub", n, v)
		}
	}
	for k, v := range map[string]string{"KEEP": "ok", "PATH": "/usr/bin:/bin", "HOME": "/root", "XPTYACTOR_": "kept"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q kept", k, got[k], v)
		}
	}
}

func TestBuildEnvScrubsSecretValueShapes(t *testing.T) {
	secrets := map[string]string{
		"A_PEM":    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
		"A_PEM2":   "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA=\n",
		"A_PEM3":   "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
		"GH1":      "ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"GH2":      "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"GH3":      "gho_0123456789abcdefghijABCDEFGHIJ012345",
		"GH4":      "ghs_0123456789abcdefghijABCDEFGHIJ012345",
		"AWS1":     "AKIAIOSFODNN7EXAMPLE",
		"AWS2":     "ASIAIOSFODNN7EXAMPLE",
		"SLACK1":   "xoxb-1234567890-abcdefghijkl",
		"SLACK2":   "xoxp-1234567890-abcdefghijkl",
		"OPENAI":   "sk-proj-0123456789abcdefABCDEF",
		"STRIPE":   "sk_live_0123456789abcdefABCDEF",
		"STRIPE_R": "rk_live_0123456789abcdefABCDEF",
	}
	keep := map[string]string{
		"GOPATH":    "/root/go",
		"LANG":      "C.UTF-8",
		"SHORT":     "sk-",
		"WORD":      "skeleton",
		"AWS_LIKE":  "AKIA", // too short to be an access key id
		"LOWER":     "akiaiosfodnn7example",
		"GHOST":     "ghost",
		"XOXO":      "xoxo",
		"EMPTY":     "",
		"EQUALS":    "a=b=c",
		"PEM_CERT":  "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"MULTILINE": "line1\nline2",
	}
	var parent []string
	for k, v := range secrets {
		parent = append(parent, k+"="+v)
	}
	for k, v := range keep {
		parent = append(parent, k+"="+v)
	}
	got := envMap(t, BuildEnv(parent, nil, nil))
	for k := range secrets {
		if _, ok := got[k]; ok {
			t.Errorf("value-shaped secret %s survived the scrub", k)
		}
	}
	for k, v := range keep {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %q (present %v), want %q kept", k, g, ok, v)
		}
	}
}

func TestBuildEnvDefaultsAndTrustedMap(t *testing.T) {
	parent := []string{
		"TERM=xterm-256color", "PAGER=less", "EDITOR=vim", "KEEP=ok",
		"GITHUB_TOKEN=from-parent", "X1=ghp_0123456789abcdefghijABCDEFGHIJ012345",
	}
	got := envMap(t, BuildEnv(parent, AgentDefaults(), map[string]string{
		"GITHUB_TOKEN": "from-trusted",                        // a scrubbed name, re-added
		"X1":           "ghp_trustedTRUSTEDtrusted0123456789", // a scrubbed shape, re-added
		"GIT_PAGER":    "more",                                // the trusted map beats the defaults
		"EXTRA":        "added",
	}))
	want := map[string]string{
		"TERM":         "xterm-256color", // defaults beat the parent
		"PAGER":        "cat",
		"MANPAGER":     "cat",
		"GIT_EDITOR":   ":",
		"GIT_PAGER":    "more",
		"EDITOR":       "vim",
		"KEEP":         "ok",
		"GITHUB_TOKEN": "from-trusted",
		"X1":           "ghp_trustedTRUSTEDtrusted0123456789",
		"EXTRA":        "added",
	}
	if len(got) != len(want) {
		t.Errorf("env has %d entries, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	d := AgentDefaults()
	for k, v := range map[string]string{"TERM": "xterm-256color", "PAGER": "cat", "GIT_PAGER": "cat", "GIT_EDITOR": ":", "MANPAGER": "cat"} {
		if d[k] != v {
			t.Errorf("AgentDefaults()[%s] = %q, want %q", k, d[k], v)
		}
	}
	// AgentDefaults hands out a fresh map each time.
	d["TERM"] = "changed"
	if AgentDefaults()["TERM"] != "xterm-256color" {
		t.Error("AgentDefaults shares its map between callers")
	}
}

func TestBuildEnvOutputIsSortedAndWellFormed(t *testing.T) {
	parent := []string{"ZED=1", "ALPHA=2", "MID=3", "NOEQUALS", "=nameless", "DUP=first", "DUP=last"}
	env := BuildEnv(parent, map[string]string{"BETA": "4"}, map[string]string{"OMEGA": "5"})
	if !slices.IsSorted(env) {
		t.Fatalf("not sorted: %q", env)
	}
	got := envMap(t, env)
	if _, ok := got["NOEQUALS"]; ok {
		t.Errorf("an entry without '=' survived: %q", env)
	}
	if _, ok := got[""]; ok {
		t.Errorf("an entry without a name survived: %q", env)
	}
	// As for exec: the last of duplicate names wins.
	if got["DUP"] != "last" {
		t.Errorf("DUP = %q, want the last value", got["DUP"])
	}
	for _, k := range []string{"ZED", "ALPHA", "MID", "BETA", "OMEGA"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s missing from %q", k, env)
		}
	}
	// Same input, same output.
	if again := BuildEnv(parent, map[string]string{"BETA": "4"}, map[string]string{"OMEGA": "5"}); !slices.Equal(env, again) {
		t.Errorf("not reproducible:\n%q\n%q", env, again)
	}
}
