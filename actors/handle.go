package actors

import (
	"context"

	"github.com/ptyactor/ptyactor/messages"
)

// Session is a handle on one published session, as os/exec's *Cmd is on a
// process: it carries the owner and the id, so its calls take only what
// changes from call to call. Service.Spawn returns one; Service.Session
// makes one for an id learned elsewhere (a tool call). A handle holds no
// resources: dropping it leaves the session open, and the owner's disposal
// closes it like any other.
type Session struct {
	svc   *Service
	owner messages.Owner
	info  messages.SpawnResult
}

// Session returns a handle for a session id of owner without asking the
// runtime; a wrong or foreign id surfaces as ErrNoSession on first use.
func (s *Service) Session(owner messages.Owner, id messages.SessionID) *Session {
	return &Session{svc: s, owner: owner, info: messages.SpawnResult{Snapshot: messages.Snapshot{SessionID: id}}}
}

// ID names the session in tool calls and the message protocol.
func (h *Session) ID() messages.SessionID { return h.info.SessionID }

// Owner is the identity the session belongs to.
func (h *Session) Owner() messages.Owner { return h.owner }

// PID is the shell's process id (zero for a handle made by Service.Session).
func (h *Session) PID() int { return h.info.PID }

// Info is the session as it was published: its snapshot at that moment and
// the startup output (Motd). Status changes later; ask Status for now.
func (h *Session) Info() messages.SpawnResult { return h.info }

// Status is the session's current status.
func (h *Session) Status(ctx context.Context) (messages.SessionStatus, error) {
	snap, err := h.svc.Describe(ctx, h.owner, h.info.SessionID)
	return snap.Status, err
}

// Send writes input and waits until the send settles; see Service.Send.
func (h *Session) Send(ctx context.Context, req messages.SendRequest) (messages.SendResult, error) {
	return h.svc.Send(ctx, h.owner, h.info.SessionID, req)
}

// StartSend reserves the send slot and starts writing; see
// Service.StartSend.
func (h *Session) StartSend(ctx context.Context, req messages.SendRequest) (*SendOp, error) {
	return h.svc.StartSend(ctx, h.owner, h.info.SessionID, req)
}

// Wait waits without writing; see Service.Wait.
func (h *Session) Wait(ctx context.Context, policy messages.WaitPolicy) (messages.SendResult, error) {
	return h.svc.Wait(ctx, h.owner, h.info.SessionID, policy)
}

// Screen returns what the terminal shows now.
func (h *Session) Screen(ctx context.Context) (messages.Screen, error) {
	return h.svc.Screen(ctx, h.owner, h.info.SessionID)
}

// Resize sets the terminal's size; see Service.Resize.
func (h *Session) Resize(ctx context.Context, rows, cols int) error {
	return h.svc.Resize(ctx, h.owner, h.info.SessionID, rows, cols)
}

// Read pages retained scrollback, newest last.
func (h *Session) Read(ctx context.Context, req messages.ReadRequest) (messages.ReadResult, error) {
	return h.svc.Read(ctx, h.owner, h.info.SessionID, req)
}

// Signal sends sig to the terminal's foreground process group.
func (h *Session) Signal(ctx context.Context, sig messages.Signal) (messages.SignalResult, error) {
	return h.svc.Signal(ctx, h.owner, h.info.SessionID, sig)
}

// Close tears the session's process tree down and returns once it is
// quiet, with the leak report. A close already in flight is joined. A
// failed close returns *messages.CleanupError and may be retried.
func (h *Session) Close(ctx context.Context, reason string) (messages.CloseReport, error) {
	_, rep, err := h.svc.Kill(ctx, h.owner, h.info.SessionID, reason)
	return rep, err
}
