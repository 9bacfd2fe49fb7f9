package messages

import "testing"

// Each reading gets the badge a person reads right: a password read is a
// secret whoever reads it, a line read waits for input, the shell reading
// keys is at its prompt, a REPL's line editor waits for input, and a
// program reading keys on the alternate screen or in a timed wait (top)
// is interactive, not stuck.
func TestReadingBadge(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Reading
		want Badge
	}{
		{"bash at its prompt (readline)", Reading{Shell: true}, BadgePrompt},
		{"bash's read builtin", Reading{Shell: true, Canonical: true, Echo: true}, BadgeWaiting},
		{"bash's read -s", Reading{Shell: true, Canonical: true}, BadgeSecret},
		{"cat", Reading{Canonical: true, Echo: true}, BadgeWaiting},
		{"getpass", Reading{Canonical: true}, BadgeSecret},
		{"getpass on the alternate screen", Reading{Canonical: true, FullScreen: true, Timed: true}, BadgeSecret},
		{"python3's REPL (readline)", Reading{Echo: false}, BadgeWaiting},
		{"top", Reading{FullScreen: true, Timed: true}, BadgeInteractive},
		{"top without an alternate screen", Reading{Timed: true}, BadgeInteractive},
		{"vim, idle", Reading{FullScreen: true}, BadgeInteractive},
		{"the shell at its prompt after a program left the alternate screen on", Reading{Shell: true, FullScreen: true}, BadgePrompt},
	} {
		if got := c.r.Badge(); got != c.want {
			t.Errorf("%s: %+v reads as %q, want %q", c.name, c.r, got, c.want)
		}
	}
}
