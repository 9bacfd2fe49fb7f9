package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// The screen on demand and a resize, through a host: the terminal is the
// host's, and so are the errors (a size out of range is
// ErrInvalidArgument here as on one machine).
func TestRemoteScreenAndResize(t *testing.T) {
	if isolate(t) {
		return
	}
	_, svc, _, sh := spawnOnHost(t)
	ctx := testkit.Ctx(t)

	if _, err := sh.Send(ctx, messages.SendRequest{Text: "printf 'hello'", Submit: true}); err != nil {
		t.Fatal(err)
	}
	sc, err := sh.Screen(ctx)
	if err != nil || sc.CursorRow < 0 || sc.CursorRow >= len(sc.Rows) || !strings.Contains(sc.Rows[sc.CursorRow], "hello") {
		t.Fatalf("screen after printf: %+v %v", sc, err)
	}

	if err := sh.Resize(ctx, 0, 10); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Fatalf("resize 0x10: %v, want ErrInvalidArgument", err)
	}
	if err := sh.Resize(ctx, 30, 100); err != nil {
		t.Fatalf("resize 30x100: %v", err)
	}
	if sc, err := sh.Screen(ctx); err != nil || sc.Height != 30 || sc.Width != 100 || len(sc.Rows) != 30 {
		t.Fatalf("screen after resize: %dx%d, %d rows, %v", sc.Height, sc.Width, len(sc.Rows), err)
	}
	// The kernel's size is the new one too: the PTY was resized on the host.
	if res, err := sh.Send(ctx, messages.SendRequest{Text: "stty size", Submit: true}); err != nil || !strings.Contains(res.Viewport, "30 100") {
		t.Fatalf("stty size: %+v %v", res, err)
	}

	// Another owner's request is answered as for an unknown session, and
	// a closed session's as well.
	other, err := svc.NewOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Session(other, sh.ID()).Screen(ctx); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("another owner's screen: %v", err)
	}
	if _, err := sh.Close(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Screen(ctx); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("screen after close: %v", err)
	}
	if err := sh.Resize(ctx, 24, 80); !errors.Is(err, messages.ErrNoSession) {
		t.Fatalf("resize after close: %v", err)
	}
}
