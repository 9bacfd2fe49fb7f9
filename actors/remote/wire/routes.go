package wire

import "google.golang.org/protobuf/reflect/protoreflect"

// The wire's route table is its schema: a request names a session exactly
// when its body has a `session` field (StartSend, AwaitSend,
// ReadSendOutput, CancelSend, Read, Signal, Kill, Describe, GetScreen,
// Resize, Mark, TakeControl, ControlInput, ReturnControl, EnterSecret).
// FetchRecording names its closed session client_session instead: it is
// no request to a live session, and carries no owner. A new session
// request routes by declaring that field in wire.proto; nothing here
// changes.

// bodyField is the name of the field every session request body carries.
const bodyField protoreflect.Name = "session"

// Session is the session r names, or "" when its body names none (Spawn,
// List, owner and link requests).
func (r *Request) Session() string {
	m := r.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("body"))
	if fd == nil || fd.Message() == nil {
		return ""
	}
	body := m.Get(fd).Message()
	sf := body.Descriptor().Fields().ByName(bodyField)
	if sf == nil || sf.Kind() != protoreflect.StringKind {
		return ""
	}
	return body.Get(sf).String()
}
