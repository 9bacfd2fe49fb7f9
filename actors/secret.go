package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
)

// A secret a person types at a secret prompt (a console's secret page):
// written straight into the terminal, once, only while the kernel shows
// the same wait the result reported (the same thread, asleep the same
// number of times), so a secret never lands in a later prompt or in the
// shell. It is recorded as its length only (the terminal reads it with
// echo off), never logged, and never in a result: the agent's next result
// only says that a person entered one.

// EnterSecret types a person's secret at prompt p (from a result's
// SecretPrompt), with Enter, if that prompt still waits; otherwise
// messages.ErrSecretPromptGone and nothing is written. The secret's bytes
// are zeroed once written.
func (h *Session) EnterSecret(ctx context.Context, p messages.SecretPrompt, secret []byte) error {
	r, err := askSession[*protocol.EnterSecretReply](ctx, h, &protocol.EnterSecret{Owner: h.owner, Session: h.ID(), Prompt: p, Secret: secret})
	if err != nil {
		return err
	}
	return r.Err
}

// secretWriteBound bounds the write of a person's secret.
const secretWriteBound = 10 * time.Second

type (
	// secretWritten: EnterSecret's write ended.
	secretWritten struct {
		err    error
		sender *actor.PID
	}
	// secretNote: session → the send in flight, a person entered a
	// secret; secretBounced: it had settled already.
	secretNote    struct{}
	secretBounced struct{}
)

func (s *sessionActor) onEnterSecret(ctx actor.Context, m *protocol.EnterSecret) {
	sender := ctx.Sender()
	reply := func(err error) { s.sys.Root.Send(sender, &protocol.EnterSecretReply{Err: err}) }
	pw, canWrite := s.bs.(backend.PersonWriter)
	pr, canProbe := s.bs.(backend.StdinProber)
	if err := s.Refusal(); err != nil {
		reply(err)
		return
	}
	switch {
	case !canWrite || !canProbe:
		reply(messages.InvalidArgument("this session's backend cannot prove a secret prompt"))
		return
	case len(m.Secret) == 0:
		reply(messages.InvalidArgument("the secret is empty"))
		return
	}
	p, secret, self, sys := m.Prompt, m.Secret, s.self, s.sys
	enter := s.bs.Enter()
	go func() {
		defer clear(secret)
		obs, err := pr.ProbeStdin()
		if err != nil || !samePrompt(obs, p) {
			sys.Root.Send(self, &secretWritten{err: messages.Errorf(messages.CodeSecretPromptGone,
				"the secret prompt of %s in PTY session %s no longer waits: nothing was written", p.Reader, p.Session), sender: sender})
			return
		}
		line := append(append(make([]byte, 0, len(secret)+len(enter)), secret...), enter...)
		// Bounded: a program that stopped reading must not hold this
		// goroutine (the prompt was proven waiting a moment ago).
		wctx, cancel := context.WithTimeout(context.Background(), secretWriteBound)
		_, err = pw.WriteAs(wctx, record.SourceOperator, line)
		cancel()
		clear(line)
		if err != nil {
			err = fmt.Errorf("%w: a person's secret: %w", messages.ErrTransport, err)
		}
		sys.Root.Send(self, &secretWritten{err: err, sender: sender})
	}()
}

// samePrompt reports whether obs shows the wait p names, still at a
// secret prompt with nothing typed ahead.
func samePrompt(obs backend.StdinObservation, p messages.SecretPrompt) bool {
	return obs.Waiting && obs.Secret && obs.InputConsumed && obs.Pgid == p.Pgid &&
		obs.ReaderTID == p.TID && obs.InputSeq == p.InputSeq
}

func (s *sessionActor) onSecretWritten(_ actor.Context, m *secretWritten) {
	if m.err == nil {
		// The agent's next result says a person entered a secret: the
		// send in flight (a wait) when there is one.
		if s.agentSendRunning() {
			s.sys.Root.Send(s.sendPID, &secretNote{})
		} else {
			s.secretEntered = true
		}
	}
	s.sys.Root.Send(m.sender, &protocol.EnterSecretReply{Err: m.err})
}
