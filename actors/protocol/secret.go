package protocol

import (
	"fmt"
	"log/slog"

	"github.com/ptyactor/ptyactor/messages"
)

// A secret a person types at a secret prompt: written straight into the
// terminal, once, only while the kernel shows the same wait the result
// reported (actors/secret.go).

// EnterSecret writes a person's secret, with Enter, at prompt p, which
// must still wait. Reply: *EnterSecretReply.
type EnterSecret struct {
	Owner   messages.Owner
	Session messages.SessionID
	Prompt  messages.SecretPrompt
	Secret  []byte
}

// Format keeps the secret out of every log line (a dead letter is logged
// with its message): fmt and slog render its length only.
func (m *EnterSecret) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "protocol.EnterSecret{session:%s reader:%s secret:(%d bytes)}", m.Session, m.Prompt.Reader, len(m.Secret))
}

// LogValue implements slog.LogValuer.
func (m *EnterSecret) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(m)) }

// EnterSecretReply answers EnterSecret.
type EnterSecretReply struct{ Err error }

func (m *EnterSecret) Target() (messages.Owner, messages.SessionID) { return m.Owner, m.Session }
func (m *EnterSecret) Refuse(err error) any                         { return &EnterSecretReply{Err: err} }
