package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/messages"
	"google.golang.org/protobuf/proto"
)

// marshalled is m after a trip through its encoding.
func marshalled[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameInstant(a, b time.Time) bool { return a.IsZero() && b.IsZero() || a.Equal(b) }

func testHandback() messages.Handback {
	since := time.Date(2026, 12, 3, 2, 0, 0, 123456789, time.UTC)
	return messages.Handback{
		People: []string{"operator", "ada"}, Reason: messages.HandbackReturned,
		Since: since, Until: since.Add(90 * time.Second),
		FromSeq: 17, ToSeq: 230, FromCursor: 4, ToCursor: 12,
		Lines:     []messages.TypedLine{{Text: "echo remote-$((6*7))"}, {Secret: true, Len: 11}, {Text: ""}},
		ExitCodes: []int{0, 130, -1}, HalfTyped: "git sta", Truncated: true,
	}
}

func checkHandback(t *testing.T, got *messages.Handback, want messages.Handback) {
	t.Helper()
	if got == nil {
		t.Fatal("the handback was lost")
	}
	if !sameInstant(got.Since, want.Since) || !sameInstant(got.Until, want.Until) {
		t.Fatalf("times %v..%v, want %v..%v", got.Since, got.Until, want.Since, want.Until)
	}
	g, w := *got, want
	g.Since, g.Until, w.Since, w.Until = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("handback %+v, want %+v", g, w)
	}
}

// A person's hold, its hand-back and the requests about them cross the
// wire whole: holder, epoch, times to the nanosecond, typed lines (a
// secret one by its length only), exit codes, cursors and seqs.
func TestControlConversionsRoundTrip(t *testing.T) {
	since := time.Date(2026, 12, 3, 2, 18, 0, 42, time.UTC)
	c := messages.Control{Holder: "ada", Person: true, Since: since, Epoch: 3, IdleTimeout: 5 * time.Minute, IdleDeadline: since.Add(5 * time.Minute)}
	got := ControlFrom(marshalled(t, ControlTo(c)))
	if got.Holder != "ada" || !got.Person || got.Epoch != 3 || got.IdleTimeout != 5*time.Minute || !got.Since.Equal(since) || !got.IdleDeadline.Equal(c.IdleDeadline) {
		t.Fatalf("control %+v, want %+v", got, c)
	}
	agent := messages.Control{Holder: messages.AgentHolder, Epoch: 4}
	if got := ControlFrom(marshalled(t, ControlTo(agent))); got != agent {
		t.Fatalf("the agent's control %+v, want %+v (zero times stay zero)", got, agent)
	}
	if got := ControlFrom(nil); got.Holder != messages.AgentHolder || got.Person {
		t.Fatalf("a host that predates control: %+v", got)
	}

	h := testHandback()
	rep := marshalled(t, &Reply{Call: 1, Body: &Reply_ReturnControl{ReturnControl: HandbackTo(&h)}})
	checkHandback(t, HandbackFrom(rep.GetReturnControl()), h)
	if HandbackTo(nil) != nil || HandbackFrom(nil) != nil {
		t.Fatal("nil must stay nil")
	}

	res := messages.SendResult{Cause: messages.CauseTakenOver, Handback: &h}
	sr := SendResultFrom(marshalled(t, SendResultTo(res)))
	if sr.Cause != messages.CauseTakenOver {
		t.Fatalf("cause %q", sr.Cause)
	}
	checkHandback(t, sr.Handback, h)
	if SendResultFrom(SendResultTo(messages.SendResult{})).Handback != nil {
		t.Fatal("a result without a handback got one")
	}
	rr := ReadResultFrom(marshalled(t, ReadResultTo(messages.ReadResult{Text: "x", Handback: &h})))
	checkHandback(t, rr.Handback, h)

	snap := SnapshotFrom(marshalled(t, SnapshotTo(messages.Snapshot{SessionID: "pty-1", Control: c})))
	if snap.Control.Holder != "ada" || snap.Control.Epoch != 3 || !snap.Control.Since.Equal(since) {
		t.Fatalf("snapshot control %+v", snap.Control)
	}

	req := messages.TakeControlRequest{Person: "ada", Interrupt: true, IdleTimeout: 90 * time.Second}
	tc := marshalled(t, &Request{Body: &Request_TakeControl{TakeControl: TakeControlTo("pty-1", req)}})
	if got := TakeControlRequestFrom(tc.GetTakeControl()); got != req || tc.Session() != "pty-1" {
		t.Fatalf("take control %+v on %q, want %+v", got, tc.Session(), req)
	}
}

// CONTROL_HELD and CONTROL_STALE keep their class, and the session the
// host names in their text is the client's.
func TestControlErrorsKeepTheirClass(t *testing.T) {
	c := messages.Control{Holder: "operator", Person: true, Since: time.Now(), Epoch: 2}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{messages.ControlHeld("pty-host", c), messages.ErrControlHeld},
		{messages.ControlStale("pty-host", 1, c), messages.ErrControlStale},
	} {
		got := ErrorFrom(Renamed(roundTrip(t, ErrorTo(tc.err)), "pty-host", "pty-client"))
		if !errors.Is(got, tc.want) || strings.Contains(got.Error(), "pty-host") || !strings.Contains(got.Error(), "pty-client") {
			t.Fatalf("%q: class %v lost, or the host's id kept", got, tc.want)
		}
		var me *messages.Error
		if !errors.As(got, &me) || me.Code != tc.want.(*messages.Error).Code {
			t.Fatalf("coded error: %#v", me)
		}
	}
}
