package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

func TestRemoteSessionKeepsStateAndExitCodes(t *testing.T) {
	if isolate(t) {
		return
	}
	h := startHost(t)
	svc, o := newClient(t, h)
	ctx := testkit.Ctx(t)
	sh, err := svc.Spawn(ctx, o, messages.SpawnRequest{Host: "h0"})
	if err != nil {
		t.Fatalf("spawn: %v\nhost log:\n%s", err, h.stderr)
	}
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
