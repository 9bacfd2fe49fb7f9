package actors

import "github.com/ptyactor/ptyactor/messages"

// The route table. Each request type says once, here, where it goes and
// what its refusal looks like; the service, the owner, the session and the
// supervisors route and refuse through these methods instead of switching
// over the types each time.

// sessionRequest is a request addressed to one session. The service
// forwards it to the owner, the owner to the session (or the facade's route
// cache sends it straight there), and the session authorizes it again.
type sessionRequest interface {
	refuser
	target() (messages.Owner, messages.SessionID)
}

// refuser is a request whose reply type is known, so a refusal (an unknown
// id, a failed actor) always answers it: nobody waits for a reply that
// cannot come.
type refuser interface {
	refuse(err error) any
}

// refusal is the reply m gets when it is refused with err; nil when m is
// not a request.
func refusal(m any, err error) any {
	if r, ok := m.(refuser); ok {
		return r.refuse(err)
	}
	return nil
}

func (m *StartSend) target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *AwaitSend) target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *ReadSendOutput) target() (messages.Owner, messages.SessionID) { return m.Owner, m.Session }
func (m *CancelSend) target() (messages.Owner, messages.SessionID)     { return m.Owner, m.Session }
func (m *Read) target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *SignalSession) target() (messages.Owner, messages.SessionID)  { return m.Owner, m.Session }
func (m *Kill) target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *Describe) target() (messages.Owner, messages.SessionID)       { return m.Owner, m.Session }
func (m *lookupSession) target() (messages.Owner, messages.SessionID)  { return m.owner, m.id }
func (m *GetScreen) target() (messages.Owner, messages.SessionID)      { return m.Owner, m.Session }
func (m *Resize) target() (messages.Owner, messages.SessionID)         { return m.Owner, m.Session }
func (m *Mark) target() (messages.Owner, messages.SessionID)           { return m.Owner, m.Session }
func (m *WatchSession) target() (messages.Owner, messages.SessionID)   { return m.Owner, m.Session }
func (m *TakeControl) target() (messages.Owner, messages.SessionID)    { return m.Owner, m.Session }
func (m *ControlInput) target() (messages.Owner, messages.SessionID)   { return m.Owner, m.Session }
func (m *ReturnControl) target() (messages.Owner, messages.SessionID)  { return m.Owner, m.Session }

func (m *StartSend) refuse(err error) any { return &StartSendReply{Err: err} }
func (m *AwaitSend) refuse(err error) any {
	return &SendSettled{Session: m.Session, Ticket: m.Ticket, Err: err}
}
func (m *ReadSendOutput) refuse(err error) any { return &ReadSendOutputReply{Err: err} }
func (m *CancelSend) refuse(error) any         { return &CancelSendReply{} }
func (m *Read) refuse(err error) any           { return &ReadReply{Err: err} }
func (m *SignalSession) refuse(err error) any  { return &SignalReply{Err: err} }
func (m *Kill) refuse(err error) any           { return &KillReply{Err: err} }
func (m *Describe) refuse(err error) any       { return &DescribeReply{Err: err} }
func (m *lookupSession) refuse(error) any      { return &lookupReply{} }
func (m *GetScreen) refuse(err error) any      { return &ScreenReply{Err: err} }
func (m *Resize) refuse(err error) any         { return &ResizeReply{Err: err} }
func (m *Mark) refuse(err error) any           { return &MarkReply{Err: err} }
func (m *WatchSession) refuse(err error) any   { return &WatchReply{Err: err} }
func (m *TakeControl) refuse(err error) any    { return &ControlReply{Err: err} }
func (m *ControlInput) refuse(err error) any   { return &ControlInputReply{Err: err} }
func (m *ReturnControl) refuse(err error) any  { return &ReturnControlReply{Err: err} }

func (m *Spawn) refuse(err error) any        { return &SpawnReply{Err: err} }
func (m *List) refuse(error) any             { return &ListReply{} }
func (m *HasOwnerActivity) refuse(error) any { return &HasOwnerActivityReply{} }
func (m *DisposeOwner) refuse(error) any     { return &DisposeOwnerReply{} }
func (m *ownerSpawn) refuse(err error) any   { return &SpawnReply{Err: err} }
func (m *taskStart) refuse(err error) any    { return &taskStartReply{err: err} }
func (m *taskLookup) refuse(err error) any   { return &taskLookupReply{err: err} }
func (m *taskTake) refuse(err error) any     { return &taskTakeReply{err: err} }
func (m *taskKill) refuse(err error) any     { return &taskKillReply{err: err} }
func (m *tasksOwnerGone) refuse(error) any   { return &tasksOwnerGoneReply{} }
func (m *injectPanic) refuse(err error) any  { return err }
