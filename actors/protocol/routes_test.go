package protocol

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/messages"
)

// Every session request names its target and refuses with a reply that
// carries the error (or, for a request whose reply has none, a reply of
// its type): nobody waits for an answer that cannot come. A message that
// is not a request has neither.
func TestRoutesNameTargetsAndRefuse(t *testing.T) {
	o := messages.NewOwner("test")
	const id = messages.SessionID("pty-1")
	cause := errors.New("refused")
	cases := []struct {
		m     SessionRequest
		reply any
	}{
		{&StartSend{Owner: o, Session: id}, &StartSendReply{Err: cause}},
		{&AwaitSend{Owner: o, Session: id, Ticket: 3}, &SendSettled{Session: id, Ticket: 3, Err: cause}},
		{&Kill{Owner: o, Session: id}, &KillReply{Err: cause}},
		{&WatchSession{Owner: o, Session: id}, &WatchReply{Err: cause}},
		{&EnterSecret{Owner: o, Session: id}, &EnterSecretReply{Err: cause}},
		{&LookupSession{Owner: o, Session: id}, &LookupReply{}},
		{&CancelSend{Owner: o, Session: id}, &CancelSendReply{}},
	}
	for _, c := range cases {
		gotO, gotID, ok := Target(c.m)
		if !ok || gotO != o || gotID != id {
			t.Errorf("%T: Target = %v %q %v, want %v %q", c.m, gotO, gotID, ok, o, id)
		}
		got := Refuse(c.m, cause)
		switch want := c.reply.(type) {
		case *StartSendReply:
			if r, ok := got.(*StartSendReply); !ok || r.Err != cause {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *SendSettled:
			if r, ok := got.(*SendSettled); !ok || r.Session != want.Session || r.Ticket != want.Ticket || r.Err != cause {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *KillReply:
			if r, ok := got.(*KillReply); !ok || r.Err != cause {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *WatchReply:
			if r, ok := got.(*WatchReply); !ok || r.Err != cause || r.Source != nil {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *EnterSecretReply:
			if r, ok := got.(*EnterSecretReply); !ok || r.Err != cause {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *LookupReply:
			if r, ok := got.(*LookupReply); !ok || r.PID != nil {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		case *CancelSendReply:
			if r, ok := got.(*CancelSendReply); !ok || r.Accepted {
				t.Errorf("%T refused with %#v", c.m, got)
			}
		}
	}
	if _, _, ok := Target(&ListOwners{}); ok {
		t.Error("ListOwners names a session")
	}
	if r := Refuse("not a request", cause); r != nil {
		t.Errorf("a non-request refused with %#v", r)
	}
	if r, ok := Refuse(&Spawn{}, cause).(*SpawnReply); !ok || r.Err != cause {
		t.Errorf("Spawn refused with %#v", r)
	}
}

// A wait writes nothing; anything typed, submitted or keyed is not one.
func TestIsWait(t *testing.T) {
	if !IsWait(messages.SendRequest{}) {
		t.Error("an empty request is a wait")
	}
	for _, req := range []messages.SendRequest{{Text: "ls"}, {Submit: true}, {Keys: []string{"C-c"}}} {
		if IsWait(req) {
			t.Errorf("%+v is not a wait", req)
		}
	}
	if err := UnknownSend(7); !errors.Is(err, messages.ErrInvalidArgument) {
		t.Errorf("UnknownSend: %v, want an invalid argument", err)
	}
}
