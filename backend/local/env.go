package local

import (
	"sort"
	"strings"

	"github.com/ptyactor/ptyactor/internal/credshape"
)

// AgentDefaults are set in every shell so pagers and editors do not hijack
// the terminal. Options.Defaults replaces them.
func AgentDefaults() map[string]string {
	return map[string]string{
		"TERM":       "xterm-256color",
		"PAGER":      "cat",
		"GIT_PAGER":  "cat",
		"GIT_EDITOR": ":",
		"MANPAGER":   "cat",
	}
}

// runtimePrefix marks the runtime's own variables; they never leak into a
// shell from the parent.
const runtimePrefix = "PTYACTOR_"

// secretName reports whether a variable name looks like it holds a secret.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	return strings.Contains(u, "KEY") || strings.Contains(u, "PASSWORD") ||
		strings.Contains(u, "SECRET") || strings.Contains(u, "TOKEN") ||
		strings.HasPrefix(u, runtimePrefix)
}

// BuildEnv returns the child environment: the parent's variables scrubbed by
// name and by value shape, then defaults, then the trusted map (which may
// re-add anything scrubbed). The result is sorted for reproducibility.
func BuildEnv(parent []string, defaults, trusted map[string]string) []string {
	env := map[string]string{}
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || secretName(k) || credshape.Value(v) {
			continue
		}
		env[k] = v
	}
	for k, v := range defaults {
		env[k] = v
	}
	for k, v := range trusted {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
