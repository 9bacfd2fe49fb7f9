package protocol

import "github.com/ptyactor/ptyactor/messages"

// The route table. Each request type says once, here, where it goes and
// what its refusal looks like; the service, the owner, the session and the
// supervisors (and a room's session actors) route and refuse through these
// methods instead of switching over the types each time.

// SessionRequest is a request addressed to one session. The service
// forwards it to the owner, the owner to the session (or the facade's route
// cache sends it straight there), and the session authorizes it again.
type SessionRequest interface {
	Request
	// Target is the owner and session the request names.
	Target() (messages.Owner, messages.SessionID)
}

// Request is a request whose reply type is known, so a refusal (an unknown
// id, a failed actor) always answers it: nobody waits for a reply that
// cannot come.
type Request interface {
	// Refuse is the request's reply when it is refused with err.
	Refuse(err error) any
}

// Refuse is the reply m gets when it is refused with err; nil when m is
// not a Request.
func Refuse(m any, err error) any {
	if r, ok := m.(Request); ok {
		return r.Refuse(err)
	}
	return nil
}

// Target is the owner and session m names; ok is false when m is not a
// SessionRequest.
func Target(m any) (owner messages.Owner, id messages.SessionID, ok bool) {
	r, ok := m.(SessionRequest)
	if !ok {
		return messages.Owner{}, "", false
	}
	owner, id = r.Target()
	return owner, id, true
}

func (m *StartSend) Target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *AwaitSend) Target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *ReadSendOutput) Target() (messages.Owner, messages.SessionID) { return m.Owner, m.Session }
func (m *CancelSend) Target() (messages.Owner, messages.SessionID)     { return m.Owner, m.Session }
func (m *Read) Target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *SignalSession) Target() (messages.Owner, messages.SessionID)  { return m.Owner, m.Session }
func (m *Kill) Target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *Describe) Target() (messages.Owner, messages.SessionID)       { return m.Owner, m.Session }
func (m *LookupSession) Target() (messages.Owner, messages.SessionID)  { return m.Owner, m.Session }
func (m *GetScreen) Target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *Resize) Target() (messages.Owner, messages.SessionID)         { return m.Owner, m.Session }
func (m *Mark) Target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *WatchSession) Target() (messages.Owner, messages.SessionID)   { return m.Owner, m.Session }
func (m *TakeControl) Target() (messages.Owner, messages.SessionID)    { return m.Owner, m.Session }
func (m *ControlInput) Target() (messages.Owner, messages.SessionID)   { return m.Owner, m.Session }
func (m *ReturnControl) Target() (messages.Owner, messages.SessionID)  { return m.Owner, m.Session }

func (m *StartSend) Refuse(err error) any { return &StartSendReply{Err: err} }
func (m *AwaitSend) Refuse(err error) any {
	return &SendSettled{Session: m.Session, Ticket: m.Ticket, Err: err}
}
func (m *ReadSendOutput) Refuse(err error) any { return &ReadSendOutputReply{Err: err} }
func (m *CancelSend) Refuse(error) any         { return &CancelSendReply{} }
func (m *Read) Refuse(err error) any           { return &ReadReply{Err: err} }
func (m *SignalSession) Refuse(err error) any  { return &SignalReply{Err: err} }
func (m *Kill) Refuse(err error) any           { return &KillReply{Err: err} }
func (m *Describe) Refuse(err error) any       { return &DescribeReply{Err: err} }
func (m *LookupSession) Refuse(error) any      { return &LookupReply{} }
func (m *GetScreen) Refuse(err error) any      { return &ScreenReply{Err: err} }
func (m *Resize) Refuse(err error) any         { return &ResizeReply{Err: err} }
func (m *Mark) Refuse(err error) any           { return &MarkReply{Err: err} }
func (m *WatchSession) Refuse(err error) any   { return &WatchReply{Err: err} }
func (m *TakeControl) Refuse(err error) any    { return &ControlReply{Err: err} }
func (m *ControlInput) Refuse(err error) any   { return &ControlInputReply{Err: err} }
func (m *ReturnControl) Refuse(err error) any  { return &ReturnControlReply{Err: err} }

func (m *Spawn) Refuse(err error) any        { return &SpawnReply{Err: err} }
func (m *List) Refuse(error) any             { return &ListReply{} }
func (m *HasOwnerActivity) Refuse(error) any { return &HasOwnerActivityReply{} }
func (m *DisposeOwner) Refuse(error) any     { return &DisposeOwnerReply{} }
