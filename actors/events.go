package actors

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/messages"
)

// Subscription delivers one owner's lifecycle events (Event* of
// actors/protocol: sessions opened, sends settled, shells exited, sessions
// closed, cleanups failed), in the order they were published, none missed
// or repeated: an agent learns that a background command finished or
// started waiting for input without polling. Events carry the wait reason,
// cause, reader, exit code and output cursor, never terminal bytes (read
// those by cursor), and never another owner's.
//
// The queue is unbounded: publishers (the actors) must never block on a
// slow subscriber. Close a subscription that is no longer read.
type Subscription struct {
	es      *eventstream.EventStream
	sub     *eventstream.Subscription
	mu      sync.Mutex
	queue   []any
	wake    chan struct{} // one pending wake-up for Next
	closed  bool
	session messages.SessionID
}

// Subscribe starts delivering the events of every session of owner from
// now on, the sessions opened later included; Session.Subscribe is one
// session's.
func (s *Service) Subscribe(owner messages.Owner) *Subscription {
	return s.subscribe(owner, "")
}

// subscribe delivers owner's events from now on; with session set, only
// that session's.
func (s *Service) subscribe(owner messages.Owner, session messages.SessionID) *Subscription {
	sub := &Subscription{es: s.sys.EventStream, wake: make(chan struct{}, 1), session: session}
	sub.sub = s.sys.EventStream.SubscribeWithPredicate(sub.push, func(evt any) bool {
		o, id, ok := eventOwner(evt)
		return ok && o == owner && (session == "" || id == session)
	})
	return sub
}

// eventOwner names the owner and session of a lifecycle event.
func eventOwner(evt any) (messages.Owner, messages.SessionID, bool) {
	switch e := evt.(type) {
	case *protocol.EventSessionOpened:
		return e.Owner, e.Snapshot.SessionID, true
	case *protocol.EventSendSettled:
		return e.Owner, e.Session, true
	case *protocol.EventSessionExited:
		return e.Owner, e.Session, true
	case *protocol.EventSessionClosed:
		return e.Owner, e.Session, true
	case *protocol.EventCleanupFailed:
		return e.Owner, e.Session, true
	case *protocol.EventControlChanged:
		return e.Owner, e.Session, true
	}
	return messages.Owner{}, "", false
}

func (sub *Subscription) push(evt any) {
	sub.mu.Lock()
	if !sub.closed {
		sub.queue = append(sub.queue, evt)
	}
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// Next returns the oldest undelivered event (one of the Event* types),
// waiting for one until ctx ends.
func (sub *Subscription) Next(ctx context.Context) (any, error) {
	for {
		sub.mu.Lock()
		if len(sub.queue) > 0 {
			evt := sub.queue[0]
			sub.queue[0] = nil
			sub.queue = sub.queue[1:]
			sub.mu.Unlock()
			return evt, nil
		}
		closed := sub.closed
		sub.mu.Unlock()
		if closed {
			return nil, errSubscriptionClosed
		}
		select {
		case <-sub.wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Close stops the deliveries; events not yet taken are dropped.
func (sub *Subscription) Close() {
	sub.es.Unsubscribe(sub.sub)
	sub.mu.Lock()
	sub.closed, sub.queue = true, nil
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// errSubscriptionClosed is what Next returns after Close.
var errSubscriptionClosed = messages.InvalidArgument("subscription closed")
