package assets_test

// The console's page in a browser: the sessions' list with their badges,
// under the page's CSP.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestConsolePage(t *testing.T) {
	f := newFake(t)
	b := testkit.NewBrowser(t)
	shots := screenshots(t)

	// Not logged in: the page says how to.
	b.Open(f.URL + "/")
	b.WaitJS(`document.getElementById("message").textContent.includes("log in with the console URL ptymcp printed")`, wait)

	b.Open(f.URL + "/#token=console-secret-42")
	b.WaitJS(`document.querySelectorAll("#sessions tbody tr").length === 2`, wait)
	var got []struct {
		Cells []string
		Href  string
	}
	b.Eval(`[...document.querySelectorAll("#sessions tbody tr")].map((tr) => ({
		cells: [...tr.cells].map((td) => td.textContent),
		href: tr.querySelector("a").getAttribute("href"),
	}))`, &got)
	want := []struct {
		cells []string
		href  string
	}{
		{[]string{"build", "agent-a", "local", "/work/app", "make", "running controlled by operator since ", "3s ago"}, "/s/s1"},
		{[]string{"editor", "agent-b", "gpu-1", "/home/dev", "vim", "waiting for input: vim", "2m ago"}, "/s/s2"},
	}
	for i, w := range want {
		same := len(got[i].Cells) == len(w.cells)
		for j := 0; same && j < len(w.cells); j++ {
			// A time of day is in the browser's zone.
			same = got[i].Cells[j] == w.cells[j] || strings.HasSuffix(w.cells[j], " since ") && strings.HasPrefix(got[i].Cells[j], w.cells[j])
		}
		if !same || got[i].Href != w.href {
			t.Errorf("row %d: %q → %s, want %q → %s", i, got[i].Cells, got[i].Href, w.cells, w.href)
		}
	}
	var hash string
	b.Eval(`location.hash`, &hash)
	if hash != "" {
		t.Errorf("the token fragment is still in the address: %q", hash)
	}
	var message string
	b.Eval(`document.getElementById("message").hidden ? "" : document.getElementById("message").textContent`, &message)
	if message != "" {
		t.Errorf("logged in, the page still says %q", message)
	}
	b.Screenshot(filepath.Join(shots, "console.png"))

	// Every badge's words.
	var badges []string
	b.Eval(`import("/assets/common.js").then((m) => [
		{badge: "running"}, {badge: "prompt", reader: "bash", exitCode: 3}, {badge: "prompt", exitCode: 0}, {badge: "prompt"},
		{badge: "waiting", reader: "python3"}, {badge: "interactive", reader: "top", idleMs: 1500},
		{badge: "interactive", reader: "top"}, {badge: "secret", reader: "bash"}, {badge: "secret"},
		{badge: "exited", exitCode: 2}, {badge: "lost"},
	].map(m.badgeText))`, &badges)
	if w := "running|at prompt (last exit 3)|at prompt (last exit 0)|at prompt|waiting for input: python3|interactive: top, output 1s ago|" +
		"interactive: top|secret prompt: bash|secret prompt|exited (2)|host lost"; strings.Join(badges, "|") != w {
		t.Errorf("badges %q, want %s", badges, w)
	}

	f.mu.Lock()
	logins := append([]string(nil), f.logins...)
	f.mu.Unlock()
	if len(logins) != 1 || logins[0] != "console-secret-42" {
		t.Errorf("logins %q, want one with the fragment's token", logins)
	}
	for _, u := range f.requested() {
		if strings.Contains(u, "console-secret-42") || strings.Contains(u, "token") {
			t.Errorf("a token was sent in a URL: %s", u)
		}
	}
	withinCSP(t, b)
}
