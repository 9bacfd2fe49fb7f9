package actors

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/extensions"
	"github.com/ptyactor/ptyactor/actors/internal/seam"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/rs/zerolog"
)

// roomSlot holds a service's room: set once, by the room's Attach.
type roomSlot struct {
	mu sync.Mutex
	p  atomic.Pointer[roomRef]
}

type roomRef struct{ r seam.Room }

func (s *roomSlot) get() seam.Room {
	if r := s.p.Load(); r != nil {
		return r.r
	}
	return nil
}

func (s *roomSlot) set(r seam.Room) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p.Load() != nil {
		return messages.InvalidArgument("the service has a room attached already")
	}
	s.p.Store(&roomRef{r})
	return nil
}

// core is a service as its room sees it (seam.Core), registered on the
// service's actor system by NewService.
type core struct{ s *Service }

var _ seam.Core[*Session, *SendOp] = core{}

func (c core) ExtensionID() extensions.ExtensionID { return seam.CoreID }
func (c core) Log() zerolog.Logger                 { return c.s.log }
func (c core) SetRoom(r seam.Room) error           { return c.s.room.set(r) }

func (c core) Adopt(ctx context.Context, owner messages.Owner, req messages.SpawnRequest, adopt any) (*Session, error) {
	s := c.s
	sp, err := ask[*protocol.SpawnReply](ctx, s.sys, s.pid, &protocol.Spawn{Owner: owner, Request: req, Adopt: adopt})
	if err == nil {
		err = sp.Err
	}
	if err != nil {
		return nil, err
	}
	return &Session{svc: s, owner: owner, info: sp.Result}, nil
}

func (c core) AwaitSend(ctx context.Context, owner messages.Owner, id messages.SessionID, ticket uint64) *SendOp {
	return c.s.awaitSend(ctx, owner, id, ticket)
}

// awaitSend makes a SendOp for a send this client did not start.
func (s *Service) awaitSend(ctx context.Context, owner messages.Owner, id messages.SessionID, ticket uint64) *SendOp {
	box := newReplyBox(s.sys, 2)
	s.sys.Root.RequestWithCustomSender(s.route(ctx, owner, id), &protocol.AwaitSend{Owner: owner, Session: id, Ticket: ticket}, box.PID)
	op := s.Session(owner, id).newSendOp(ticket, box)
	go op.await()
	return op
}
