package actors

import (
	"github.com/ptyactor/ptyactor/actors/protocol"
)

// The route table of the core's own messages (the protocol's requests say
// theirs in actors/protocol/routes.go). Each request type says once, here,
// where it goes and what its refusal looks like; the service, the owner,
// the session and the supervisors route and refuse through these methods
// (protocol.SessionRequest, protocol.Request) instead of switching over
// the types each time.

func (m *ownerSpawn) Refuse(err error) any  { return &protocol.SpawnReply{Err: err} }
func (m *taskStart) Refuse(err error) any   { return &taskStartReply{err: err} }
func (m *taskLookup) Refuse(err error) any  { return &taskLookupReply{err: err} }
func (m *taskTake) Refuse(err error) any    { return &taskTakeReply{err: err} }
func (m *taskKill) Refuse(err error) any    { return &taskKillReply{err: err} }
func (m *tasksOwnerGone) Refuse(error) any  { return &tasksOwnerGoneReply{} }
func (m *injectPanic) Refuse(err error) any { return err }
