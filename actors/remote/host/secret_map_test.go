package host

import (
	"errors"
	"testing"

	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// The gateway maps the wire's EnterSecret to the runtime's, under the
// token's owner (the session and its prompt by this host's id, the
// secret's bytes as sent), and the runtime's reply to the wire's: an
// empty body on success, SECRET_PROMPT_GONE and the rest coded.
func TestGatewayMapsSecret(t *testing.T) {
	o := messages.NewOwner("test")
	p := messages.SecretPrompt{Session: "pty-client", Pgid: 4242, TID: 4243, InputSeq: 17, Reader: "bash", Line: "pw1:"}
	got := toProtocol(o, &wire.Request{Body: &wire.Request_EnterSecret{EnterSecret: wire.EnterSecretTo("pty-1", p, []byte("hunter2"))}})
	m, ok := got.(*protocol.EnterSecret)
	if !ok {
		t.Fatalf("EnterSecret mapped to %T", got)
	}
	want := p
	want.Session = "pty-1"
	if m.Owner != o || m.Session != "pty-1" || m.Prompt != want || string(m.Secret) != "hunter2" {
		t.Fatalf("mapped %+v (secret %q), want owner %v, pty-1, prompt %+v", m, m.Secret, o, want)
	}

	body, ok, err := sessionReply(&protocol.EnterSecretReply{})
	if !ok || err != nil || body.(*wire.Reply_EnterSecret).EnterSecret == nil {
		t.Fatalf("entered: %+v %v %v", body, ok, err)
	}
	gone := messages.Errorf(messages.CodeSecretPromptGone, "the secret prompt of bash in PTY session pty-1 no longer waits: nothing was written")
	for _, tc := range []struct{ err, want error }{
		{gone, messages.ErrSecretPromptGone},
		{messages.ErrSessionExited, messages.ErrSessionExited},
		{messages.InvalidArgument("the secret is empty"), messages.ErrInvalidArgument},
	} {
		body, ok, err := sessionReply(&protocol.EnterSecretReply{Err: tc.err})
		if !ok || body != nil || !errors.Is(wire.ErrorFrom(wire.ErrorTo(err)), tc.want) {
			t.Errorf("refused with %v: body %v, ok %v, err %v", tc.err, body, ok, err)
		}
	}
}
