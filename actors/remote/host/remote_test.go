package host_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestRemoteSessionKeepsStateAndExitCodes(t *testing.T) {
	if isolate(t) {
		return
	}
	_, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	if sh.PID() == 0 || !strings.HasPrefix(string(sh.ID()), "pty-") {
		t.Fatalf("info %+v", sh.Info())
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "X=remote42", Submit: true}); err != nil {
		t.Fatal(err)
	}
	res, err := sh.Send(ctx, messages.SendRequest{Text: "echo $X; false", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Viewport, "remote42") || res.ExitCode == nil || *res.ExitCode != 1 || res.WaitReason != messages.WaitStdinRead {
		t.Fatalf("result %+v", res)
	}
	rep, err := sh.Close(ctx, "test")
	if err != nil || len(rep.Survivors) != 0 {
		t.Fatalf("close: %+v %v", rep, err)
	}
	if _, err := sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true}); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("send after close: %v", err)
	}
}

// An error the host returns about a session names it by the id the client
// knows: the host's own id for it means nothing to the client's caller.
// The error still matches its class.
func TestRemoteErrorsNameTheClientsID(t *testing.T) {
	if isolate(t) {
		return
	}
	_, _, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)
	gate, release := fifoGate(t)
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "read _ < " + gate + "; echo released", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true})
	if !errors.Is(err, messages.ErrSendActive) {
		t.Fatalf("a second send: %v, want SEND_ACTIVE", err)
	}
	namesOnly(t, err, sh.ID())
	release()
	if res, err := op.Result(ctx); err != nil || !strings.Contains(res.Viewport, "released") {
		t.Fatalf("the first send: %+v %v", res, err)
	}
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	_, err = sh.Send(ctx, messages.SendRequest{Text: "true", Submit: true})
	if !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("send after close: %v, want NO_SESSION", err)
	}
	namesOnly(t, err, sh.ID())
}

// sessionIDs matches the ids the runtime mints.
var sessionIDs = regexp.MustCompile(`pty-[0-9a-f]+`)

// namesOnly fails unless err's text names a session, and only id.
func namesOnly(t *testing.T, err error, id messages.SessionID) {
	t.Helper()
	got := sessionIDs.FindAllString(err.Error(), -1)
	if len(got) == 0 {
		t.Fatalf("%q names no session; want %s", err, id)
	}
	for _, s := range got {
		if s != string(id) {
			t.Fatalf("%q names %s; the client knows the session as %s", err, s, id)
		}
	}
}
