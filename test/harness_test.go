package test

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// harness is one test's runtime, local backend and owner. Every process the
// backend starts carries the test's tag in its environment; when the test
// ends (after Shutdown) no tagged process may be alive.
type harness struct {
	t     testing.TB
	svc   *actors.Service
	owner messages.Owner
	tag   string
}

func newHarness(t testing.TB, cfg messages.Config, opts local.Options) *harness {
	t.Helper()
	h := &harness{t: t, tag: randHex(8)}
	// Registered before the service's cleanup, so it runs after Shutdown.
	t.Cleanup(func() { h.checkNoTagged("after Shutdown") })
	h.svc = testkit.Service(t, testkit.ServiceOptions{Config: cfg, Backends: []backend.Backend{local.New(h.options(opts))}})
	h.owner = testkit.Owner(t, h.svc, t.Name())
	return h
}

// options adds the test's tag to the backend's trusted environment.
func (h *harness) options(opts local.Options) local.Options {
	env := maps.Clone(opts.Env)
	if env == nil {
		env = map[string]string{}
	}
	env[tagVar] = h.tag
	opts.Env = env
	return opts
}

// checkNoTagged fails the test if a process it started is still alive, and
// kills it.
func (h *harness) checkNoTagged(when string) {
	h.t.Helper()
	if ps := tagged(h.t, h.tag); len(ps) > 0 {
		h.t.Errorf("processes started by this test are alive %s:\n  %s", when, describe(ps))
		killAll(ps)
	}
}

func (h *harness) spawn(req messages.SpawnRequest) *actors.Session {
	h.t.Helper()
	sp, err := h.svc.Spawn(testkit.Ctx(h.t), h.owner, req)
	if err != nil {
		h.t.Fatalf("Spawn(%+v): %v", req, err)
	}
	if sp.PID() <= 0 {
		h.t.Fatalf("Spawn returned pid %d", sp.PID())
	}
	trackShell(sp.PID())
	return sp
}

// send submits text and waits for the send to settle.
func (h *harness) send(id messages.SessionID, text string) messages.SendResult {
	h.t.Helper()
	res, err := h.svc.Session(h.owner, id).Send(testkit.Ctx(h.t), messages.SendRequest{Text: text, Submit: true})
	if err != nil {
		h.t.Fatalf("Send(%q): %v", text, err)
	}
	return res
}

// sendWhenFree is send for the first send after a cancelled one. The
// cancelled send keeps the slot until its interrupt drained (REFERENCE §a
// [HEAD] answers SEND_ACTIVE meanwhile); ptyactor's StartSend waits for the
// drain instead, so no retry is needed and SEND_ACTIVE here fails the test.
func (h *harness) sendWhenFree(id messages.SessionID, text string) messages.SendResult {
	h.t.Helper()
	return h.send(id, text)
}

// prompt submits a shell command and requires it to settle on the prompt
// marker with exit code want.
func (h *harness) prompt(id messages.SessionID, text string, want int) messages.SendResult {
	h.t.Helper()
	res := h.send(id, text)
	if res.WaitReason != messages.WaitStdinRead {
		h.t.Fatalf("Send(%q): wait reason %q, want stdin_read; viewport %q", text, res.WaitReason, res.Viewport)
	}
	if res.ExitCode == nil || *res.ExitCode != want {
		h.t.Fatalf("Send(%q): exit code %s, want %d; viewport %q", text, codeString(res.ExitCode), want, res.Viewport)
	}
	if res.Status.Exited {
		h.t.Fatalf("Send(%q): session status %s, want running", text, res.Status)
	}
	return res
}

// waitListEmpty waits until the owner lists no session. Kill should remove
// the record before it returns (TestKillReleasesRecordBeforeReturning pins
// that); elsewhere only the eventual state is asserted.
func (h *harness) waitListEmpty(what string) {
	h.t.Helper()
	ctx := testkit.Ctx(h.t)
	testkit.WaitFor(h.t, 10*time.Second, "an empty List "+what, func() bool {
		l, err := h.svc.List(ctx, h.owner)
		if err != nil {
			h.t.Fatalf("List: %v", err)
		}
		return len(l) == 0
	})
}

func codeString(c *int) string {
	if c == nil {
		return "nil"
	}
	return strconv.Itoa(*c)
}

// lines splits rendered text into its lines.
func lines(s string) []string { return strings.Split(s, "\n") }

// hasLine reports whether some line of s equals want exactly.
// onScreen reports whether the screen a result carries (a full-screen
// program's) has a row that reads want.
func onScreen(res messages.SendResult, want string) bool {
	return res.Screen != nil && slices.Contains(res.Screen.Rows, want)
}

func hasLine(s, want string) bool {
	for _, l := range lines(s) {
		if l == want {
			return true
		}
	}
	return false
}

func intp(v int) *int { return &v }

// readlineTail reports a cancelled send whose SIGINT reached bash's line
// editor mid-line: the kernel's input queue was flushed, but readline had
// already read part of line and ran that tail as a command at the prompt
// (its head dropped, so it is not found). The "^C" readline echoes is not
// asked for: under load that line is sometimes left blank.
func readlineTail(res messages.SendResult, line string) bool {
	if res.ExitCode == nil || *res.ExitCode != 127 {
		return false
	}
	for i := 1; i < len(line); i++ {
		if f := strings.Fields(line[i:]); len(f) > 0 && strings.Contains(res.Viewport, "bash: "+f[0]+": command not found") {
			return true
		}
	}
	return false
}
