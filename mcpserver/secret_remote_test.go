package mcpserver

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/ptyactor/ptyactor/tools"
)

// A secret typed by a person for a terminal that lives on a ptyhost,
// through `ptymcp -host` and its console: the model's send at read -s
// gets a link (secretUrl); the link without the console login is
// refused; logged in, the person types the secret on the page, it
// crosses the host link into the host's shell, and the model's
// terminal_wait shows the program got it (its length) and that a person
// entered it; the link works once. The secret is in no result, neither
// server's log (the host's at debug), a viewer's frames, nor the records
// (the host's among them). No process outlives the test: the host's
// shell ends with the host.
func TestSecretRemoteInBrowser(t *testing.T) {
	var shell int
	// Registered first, so it runs last: after the host, ptymcp and the
	// browser have been stopped, the host's shell is gone too.
	t.Cleanup(func() {
		if shell == 0 {
			return
		}
		testkit.WaitFor(t, 10*time.Second, "the host's shell "+strconv.Itoa(shell)+" and its session to end", func() bool {
			return !alive(shell) && len(sessionMembers(shell)) == 0
		})
	})
	host := startPtyhost(t, "-idle-silence-ms", "30000", "-log-level", "debug")
	b := testkit.NewBrowser(t)
	r := newSecretRig(t, "-host", host.Addr(), "-host-insecure")
	open := r.call(tools.TerminalOpen, obj{"name": "remote-deploy"})
	id := open.str("sessionId")
	if open.IsError || !strings.HasPrefix(id, "pty-") {
		t.Fatalf("open: %v\n%s", open.S, open.Text)
	}
	shell = int(open.num("pid"))
	if !descendsFrom(shell, host.Pid()) {
		t.Fatalf("the terminal's shell %d is not the ptyhost's (%d): not a remote session", shell, host.Pid())
	}
	r.watch(id)

	const pw = "R3mote-Tr0ub4dor-7-horses"
	res := r.call(tools.TerminalSend, obj{"sessionId": id, "text": `read -s -p 'pw: ' pw; echo len=${#pw}`})
	link := res.str("secretUrl")
	if res.IsError || res.S["secret"] != true || !strings.HasPrefix(link, r.base+"/secret/"+id+"#token=") ||
		!strings.Contains(res.Text, `The terminal waits for a secret ("pw:"). Do not type it yourself: give the user this link to type it: `+link+` (it needs their console login). Then call terminal_wait.`) {
		t.Fatalf("the send at the prompt: %v\n%s", res.S, res.Text)
	}

	// Without the console's login the link is refused.
	b.Open(link)
	b.WaitJS(`window.ptySecret && ptySecret.state === "refused" && ptySecret.code === "not_logged_in" && document.getElementById("form").hidden`, 15*time.Second)

	// Logged in (the console URL), the person types it.
	b.Open(r.consoleURL)
	b.WaitJS(`document.body.innerText.includes("remote-deploy") && document.body.innerText.includes("secret prompt")`, 15*time.Second)
	enterSecret(t, b, link, "pw:", pw, "")
	// The link works once.
	r.secretTakenOnce(b, id, link, pw)

	// The shell on the host took it and runs on: the next send is plain.
	// Its answer (of this run only: the host's records folder is the test
	// binary's) shows the checks below looked where the output is.
	n := rand.IntN(1_000_000)
	done := "secret-remote-done-" + strconv.Itoa(n+1)
	if res = r.call(tools.TerminalSend, obj{"sessionId": id, "text": "echo secret-remote-done-$((" + strconv.Itoa(n) + "+1))"}); res.IsError || !strings.Contains(res.Text, done) || res.S["secret"] == true {
		t.Fatalf("the send after the secret: %v\n%s", res.S, res.Text)
	}

	// Nowhere: the model's results, ptymcp's log, the host's log, the
	// watch socket's frames (which must show the program's answer, so the
	// check looked where the terminal's output is).
	r.mu.Lock()
	results := strings.Join(r.results, "\n")
	r.mu.Unlock()
	if strings.Contains(results, pw) {
		t.Errorf("the secret is in a result the model got")
	}
	if log := r.stderr.String(); strings.Contains(log, pw) {
		t.Errorf("the secret is in ptymcp's log")
	} else if !strings.Contains(log, id) {
		t.Errorf("ptymcp's log never names the session %s: the check looked at nothing", id)
	}
	if log := host.Stderr(); strings.Contains(log, pw) {
		t.Errorf("the secret is in the ptyhost's log:\n%s", tailString(log, 4000))
	} else if log == "" {
		t.Errorf("the ptyhost logged nothing at -log-level debug: the check looked at nothing")
	}
	var frames string
	testkit.WaitFor(t, 10*time.Second, "the watch socket's frames show "+done, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		frames = r.frames.String()
		return strings.Contains(frames, done)
	})
	if strings.Contains(frames, pw) {
		t.Errorf("the secret is in a frame of the watch socket")
	}

	// Nor any file of ptymcp's state folder or of the one the host
	// inherited (the test binary's own: testkit.PrivateState), where the
	// host records the session: a record must show the program's answer.
	leaked := map[string]bool{}
	testkit.WaitFor(t, 10*time.Second, "a record showing "+done, func() bool {
		found := false
		for _, dir := range []string{r.state, os.Getenv("XDG_STATE_HOME")} {
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return nil
				}
				if strings.Contains(string(data), pw) && !leaked[p] {
					leaked[p] = true
					t.Errorf("the secret is in %s", p)
				}
				found = found || strings.Contains(p, "recordings") && strings.Contains(string(data), done)
				return nil
			})
		}
		return found
	})
	withinPolicy(t, b)
}
