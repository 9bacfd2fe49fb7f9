package host

import (
	"errors"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// The gateway maps the wire's control requests to the runtime's, under
// the token's owner, and the runtime's replies to the wire's: a body on
// success, the coded error otherwise.
func TestGatewayMapsControl(t *testing.T) {
	o := messages.NewOwner("test")
	req := messages.TakeControlRequest{Person: "ada", Interrupt: true, IdleTimeout: time.Minute}
	for _, tc := range []struct {
		body wire.RequestBody
		want any
	}{
		{&wire.Request_TakeControl{TakeControl: wire.TakeControlTo("pty-1", req)}, &protocol.TakeControl{Owner: o, Session: "pty-1", Request: req}},
		{&wire.Request_ControlInput{ControlInput: &wire.ControlInput{Session: "pty-1", Epoch: 3, Data: []byte("ls\r")}}, &protocol.ControlInput{Owner: o, Session: "pty-1", Epoch: 3, Data: []byte("ls\r")}},
		{&wire.Request_ReturnControl{ReturnControl: &wire.ReturnControl{Session: "pty-1", Epoch: 3}}, &protocol.ReturnControl{Owner: o, Session: "pty-1", Epoch: 3}},
		{&wire.Request_Resize{Resize: wire.ResizeTo("pty-1", 30, 100, 3)}, &protocol.Resize{Owner: o, Session: "pty-1", Rows: 30, Cols: 100, ControlEpoch: 3}},
	} {
		got := toProtocol(o, &wire.Request{Body: tc.body})
		switch g := got.(type) {
		case *protocol.ControlInput:
			w := tc.want.(*protocol.ControlInput)
			if g.Owner != w.Owner || g.Session != w.Session || g.Epoch != w.Epoch || string(g.Data) != string(w.Data) {
				t.Errorf("%T: %+v, want %+v", tc.body, g, w)
			}
		case *protocol.TakeControl:
			if *g != *tc.want.(*protocol.TakeControl) {
				t.Errorf("%T: %+v, want %+v", tc.body, g, tc.want)
			}
		case *protocol.ReturnControl:
			if *g != *tc.want.(*protocol.ReturnControl) {
				t.Errorf("%T: %+v, want %+v", tc.body, g, tc.want)
			}
		case *protocol.Resize:
			if *g != *tc.want.(*protocol.Resize) {
				t.Errorf("%T: %+v, want %+v", tc.body, g, tc.want)
			}
		default:
			t.Errorf("%T mapped to %T", tc.body, got)
		}
	}

	c := messages.Control{Holder: "ada", Person: true, Epoch: 3}
	body, ok, err := sessionReply(&protocol.ControlReply{Control: c})
	if !ok || err != nil || wire.ControlFrom(body.(*wire.Reply_TakeControl).TakeControl).Epoch != 3 {
		t.Fatalf("control reply: %+v %v %v", body, ok, err)
	}
	hb := messages.Handback{People: []string{"ada"}, Reason: messages.HandbackReturned, Lines: []messages.TypedLine{{Text: "ls", Len: 2}}, ExitCodes: []int{0}}
	body, ok, err = sessionReply(&protocol.ReturnControlReply{Handback: hb})
	if got := wire.HandbackFrom(body.(*wire.Reply_ReturnControl).ReturnControl); !ok || err != nil || got.Lines[0].Text != "ls" || got.ExitCodes[0] != 0 {
		t.Fatalf("hand-back reply: %+v %v %v", got, ok, err)
	}
	if body, ok, err = sessionReply(&protocol.ControlInputReply{}); !ok || err != nil || body.(*wire.Reply_ControlInput).ControlInput == nil {
		t.Fatalf("input reply: %+v %v %v", body, ok, err)
	}
	stale := messages.ControlStale("pty-1", 2, c)
	for _, r := range []any{&protocol.ControlReply{Err: stale}, &protocol.ControlInputReply{Err: stale}, &protocol.ReturnControlReply{Err: stale}} {
		if body, ok, err := sessionReply(r); !ok || body != nil || !errors.Is(wire.ErrorFrom(wire.ErrorTo(err)), messages.ErrControlStale) {
			t.Errorf("%T refused: body %v, ok %v, err %v", r, body, ok, err)
		}
	}
}
