package remote

import (
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/messages"
)

// A person's secret at a remote session's secret prompt is the host's to
// write: its session actor proves the prompt's wait still lasts and
// writes the secret there. The proxy forwards EnterSecret (session.go)
// like the control requests, naming the session and its prompt by the
// host's id; a result's prompt comes back under the client's id. The
// secret travels only in that request (whose rendering is redacted:
// wire/redact.go), never in a log.

// enterSecret is the wire request of a person's secret, and its copy of
// the secret: the caller's bytes are zeroed as soon as it is made (as one
// machine zeroes them once written), the copy once the host answered
// (it has read the request by then). A request the host never answered
// (lost, detached) keeps its copy: the library may still be encoding it.
func (p *remoteSession) enterSecret(m *protocol.EnterSecret) (*wire.Request, []byte) {
	secret := append([]byte(nil), m.Secret...)
	clear(m.Secret)
	return &wire.Request{Body: &wire.Request_EnterSecret{EnterSecret: wire.EnterSecretTo(p.hostID, m.Prompt, secret)}}, secret
}

// secretReply answers EnterSecret from the host's reply, and zeroes the
// secret's copy.
func secretReply(op *remoteOp, rep *wire.Reply, err error) *protocol.EnterSecretReply {
	clear(op.secret)
	if err == nil && rep.GetEnterSecret() == nil {
		err = malformed("enter-secret")
	}
	return &protocol.EnterSecretReply{Err: err}
}

// result decodes a send's result from the host: its secret prompt named
// by the client's id.
func (p *remoteSession) result(w *wire.SendResult) messages.SendResult {
	r := wire.SendResultFrom(w)
	if r.SecretPrompt != nil {
		r.SecretPrompt.Session = p.id
	}
	return r
}
