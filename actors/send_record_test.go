package actors_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// keptSessions is a backend that keeps the sessions it spawned, so a test
// can read their event streams.
type keptSessions struct {
	backend.Backend
	mu sync.Mutex
	ss []backend.Session
}

func (k *keptSessions) Spawn(ctx context.Context, spec messages.SpawnSpec, cfg messages.Config, ev backend.Events) (backend.Session, error) {
	bs, err := k.Backend.Spawn(ctx, spec, cfg, ev)
	if err == nil {
		k.mu.Lock()
		k.ss = append(k.ss, bs)
		k.mu.Unlock()
	}
	return bs, err
}

// keptSession starts a service over the local backend and one session,
// keeping the backend session to read its stream.
func keptSession(t *testing.T) (*keptSessions, *Session) {
	t.Helper()
	k := &keptSessions{Backend: local.New(local.Options{})}
	svc, err := NewService(Options{Config: testkit.PTYConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	if _, err := svc.RegisterBackend(testkit.Ctx(t), k); err != nil {
		t.Fatal(err)
	}
	o, err := svc.NewOwner(testkit.Ctx(t), "record")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := svc.Spawn(testkit.Ctx(t), o, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return k, sh
}

// A send's start and settle join the session's stream in order: the lines
// it types, then the output and the prompt's exit code, then the settle
// with the same ticket, exit code and cursor as the result, whose Seq
// names it.
func TestSendStartAndSettleJoinTheStream(t *testing.T) {
	k, sh := keptSession(t)
	res, err := sh.Send(testkit.Ctx(t), messages.SendRequest{Text: "echo one; (exit 3)", Submit: true})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 3 || res.Seq == 0 {
		t.Fatalf("send: %+v, %v; want exit 3 and a Seq", res, err)
	}
	sc, err := sh.Screen(testkit.Ctx(t))
	if err != nil || sc.Seq == 0 || sc.Seq > res.Seq {
		t.Fatalf("screen seq %d (%v), want the output before settle %d", sc.Seq, err, res.Seq)
	}

	evs, _ := k.ss[0].(backend.Recorder).Events(0)
	i := slices.IndexFunc(evs, func(e record.Event) bool { return e.Kind == record.KindSend })
	j := slices.IndexFunc(evs, func(e record.Event) bool { return e.Kind == record.KindSettle })
	if i < 0 || j < i {
		t.Fatalf("send at %d, settle at %d: %+v", i, j, evs)
	}
	send, settle := evs[i], evs[j]
	if !slices.Equal(send.Send.Lines, []string{"echo one; (exit 3)"}) || send.Source != record.SourceAgent {
		t.Fatalf("send event %+v", send.Send)
	}
	st := settle.Settle
	if settle.Seq != res.Seq || st.Ticket != send.Send.Ticket || st.ExitCode == nil || *st.ExitCode != 3 ||
		st.Reason != string(res.WaitReason) || st.Cause != string(res.Cause) || st.Cursor != int64(res.Cursor) {
		t.Fatalf("settle event %+v (seq %d), result %+v", st, settle.Seq, res)
	}
	var out strings.Builder
	var sawPrompt bool
	for _, e := range evs[i:j] {
		if e.Kind == record.KindOutput {
			out.WriteString(e.Data)
		}
		sawPrompt = sawPrompt || (e.Kind == record.KindPrompt && *e.ExitCode == 3)
	}
	if !strings.Contains(out.String(), "\none\r\n") || !sawPrompt {
		t.Fatalf("between send and settle: output %q, prompt 3 seen %v", out.String(), sawPrompt)
	}
}

// A mark and a delivered signal join the stream with their numbers; a bad
// label is refused, typed, and adds nothing.
func TestMarkAndSignalJoinTheStream(t *testing.T) {
	k, sh := keptSession(t)
	ctx := testkit.Ctx(t)
	for _, bad := range []string{"", "two\nlines"} {
		if _, err := sh.Mark(ctx, bad); !errors.Is(err, messages.ErrInvalidArgument) {
			t.Fatalf("Mark(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	seq, err := sh.Mark(ctx, "tests start")
	if err != nil || seq == 0 {
		t.Fatalf("Mark: %d, %v", seq, err)
	}
	op, err := sh.StartSend(ctx, messages.SendRequest{Text: "sleep 30", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, "sleep in the foreground", func() bool {
		pgid, err := k.ss[0].Foreground()
		return err == nil && pgid != sh.PID()
	})
	sig, err := sh.Signal(ctx, messages.SIGINT)
	if err != nil || !sig.Delivered {
		t.Fatalf("SIGINT: %+v, %v", sig, err)
	}
	if _, err := op.Result(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ := k.ss[0].(backend.Recorder).Events(0)
	var marks, signals int
	for _, e := range evs {
		switch e.Kind {
		case record.KindMark:
			marks++
			if e.Seq != seq || e.Data != "tests start" {
				t.Fatalf("mark %+v, want seq %d", e, seq)
			}
		case record.KindSignal:
			if e.Signal.Name == string(messages.SIGINT) && e.Signal.Target == sig.TargetPgid {
				signals++
			}
		}
	}
	if marks != 1 || signals == 0 {
		t.Fatalf("marks %d, SIGINT events to %d: %d; want 1 and at least 1", marks, sig.TargetPgid, signals)
	}
}
