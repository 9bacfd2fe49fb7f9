package wire

import "github.com/ptyactor/ptyactor/messages"

// Conversions of a secret prompt's wait (messages.SecretPrompt) and of a
// person's secret for it. The prompt names its session by the host's id
// on the wire: a client renames it to its own on receipt and back in
// EnterSecret. The secret itself travels only in EnterSecret, which no
// log renders (redact.go).

// SecretPromptTo encodes a secret prompt's wait; nil stays nil.
func SecretPromptTo(p *messages.SecretPrompt) *SecretPrompt {
	if p == nil {
		return nil
	}
	return &SecretPrompt{Session: string(p.Session), Pgid: int64(p.Pgid), Tid: int64(p.TID), InputSeq: p.InputSeq, Reader: p.Reader, Line: p.Line}
}

// SecretPromptFrom decodes a secret prompt's wait; nil stays nil.
func SecretPromptFrom(w *SecretPrompt) *messages.SecretPrompt {
	if w == nil {
		return nil
	}
	return &messages.SecretPrompt{Session: messages.SessionID(w.GetSession()), Pgid: clampInt(w.GetPgid()), TID: clampInt(w.GetTid()),
		InputSeq: w.GetInputSeq(), Reader: w.GetReader(), Line: w.GetLine()}
}

// EnterSecretTo encodes a person's secret for prompt p of session (the
// host's id, which the prompt names too).
func EnterSecretTo(session string, p messages.SecretPrompt, secret []byte) *EnterSecret {
	p.Session = messages.SessionID(session)
	return &EnterSecret{Session: session, Prompt: SecretPromptTo(&p), Secret: secret}
}

// EnterSecretFrom decodes a person's secret: the prompt it answers and
// the secret (w's own bytes). The session it names is w's Session.
func EnterSecretFrom(w *EnterSecret) (messages.SecretPrompt, []byte) {
	var p messages.SecretPrompt
	if sp := SecretPromptFrom(w.GetPrompt()); sp != nil {
		p = *sp
	}
	return p, w.GetSecret()
}
