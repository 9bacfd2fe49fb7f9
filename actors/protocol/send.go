package protocol

import "github.com/ptyactor/ptyactor/messages"

// IsWait reports whether req writes nothing: a wait, which a session
// accepts while a person holds its input and which a proxy can follow
// without asking its host.
func IsWait(req messages.SendRequest) bool {
	return req.Text == "" && !req.Submit && len(req.Keys) == 0
}

// UnknownSend is the error for a ticket the session does not know.
func UnknownSend(ticket uint64) error {
	return messages.InvalidArgument("unknown send %d for this session", ticket)
}
