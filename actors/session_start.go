package actors

import (
	"context"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/internal/actorkit"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/internal/textcut"
	"github.com/ptyactor/ptyactor/messages"
)

// A session's startup: the backend's spawn off the mailbox, then the
// startup wait (a send with nothing to write), which publishes the session
// or rolls it back.

func (s *sessionActor) startBackend() {
	self, sys := s.self, s.sys
	bctx, cancel := context.WithCancelCause(context.Background())
	s.spawnCancel = cancel
	events := &sessionEvents{sys: sys, facts: s.factsPID}
	spec, cfg, backend, ctx := s.spec, s.cfg, s.backend, bctx
	go func() {
		bs, err := backend.Spawn(ctx, spec, cfg, events)
		sys.Root.Send(self, &backendSpawned{bs: bs, err: err})
	}()
}

func (s *sessionActor) onBackendSpawned(ctx actor.Context, m *backendSpawned) {
	if m.err != nil {
		ctx.Send(s.ownerPID, &seam.StartFailed{ID: s.id, Err: m.err})
		s.phase = actorkit.PhaseClosed
		s.finishing = true
		ctx.Poison(s.self)
		return
	}
	s.bs = m.bs
	if pr, ok := m.bs.(backend.StdinProber); ok {
		ctx.Send(s.factsPID, &attachProber{prober: pr})
	}
	// The startup wait is a send with nothing to write: marker, silence
	// after some output, or the deadline.
	s.spawnSend(ctx, &sendActor{startup: true}, nil, true)
	if s.spawnErr != nil {
		ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitTimeout})
	}
}

// onCancelSpawn: the caller of the spawn gave up while it starts.
func (s *sessionActor) onCancelSpawn(ctx actor.Context, m *seam.CancelSpawn) {
	if s.phase == actorkit.PhaseStarting && s.spawnErr == nil {
		s.spawnErr = m.Cause
		s.spawnCancel(m.Cause)
		if s.sendPID != nil {
			ctx.Send(s.sendPID, &forceSettle{reason: messages.WaitTimeout})
		}
	}
}

func (s *sessionActor) onStartupSettled(ctx actor.Context, m *sendFinished) {
	var err error
	switch {
	case s.spawnErr != nil:
		err = s.spawnErr
	case m.err != nil:
		err = m.err
	case m.result.WaitReason == messages.WaitSessionExit:
		err = startupExited(m.result)
	case m.result.WaitReason == messages.WaitTimeout:
		err = messages.ErrStartupTimeout
	}
	if err != nil {
		s.startupErr = err
		s.beginClose(ctx, "PTY startup failed", actorkit.CloseWaiter{})
		return
	}
	s.phase = actorkit.PhaseReady
	// Started: the backend no longer needs its start context.
	s.spawnCancel(nil)
	ctx.Send(s.ownerPID, &seam.Started{ID: s.id, Result: messages.SpawnResult{
		Snapshot: s.snapshot(),
		Motd:     m.result.Viewport,
	}})
}

// startupExited keeps what the shell (or a wrapper such as bwrap, which
// complains on the terminal) said before it exited: it is usually the
// reason. The text still begins with the reference's message.
func startupExited(r messages.SendResult) error {
	const keep = 1024
	out := strings.TrimSpace(r.Viewport)
	if out == "" {
		return fmt.Errorf("%w (%s)", messages.ErrStartupExited, r.Status)
	}
	if len(out) > keep {
		out = "…" + out[textcut.Tail(out, keep):]
	}
	return fmt.Errorf("%w (%s); its output: %q", messages.ErrStartupExited, r.Status, out)
}
