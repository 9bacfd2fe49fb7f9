package actors_test

import (
	"context"
	"sync"
	"testing"

	. "github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// 10,000 sends on two owners' sessions at once, under load from four
// concurrent senders: each owner's subscriber hears every one of its own
// settlements exactly once, in ticket order per session, and none of the
// other owner's.
func TestSubscriptionDeliversEveryEventOnce(t *testing.T) {
	svc, a := newTestService(t, faulty.New("shell"))
	ctx := testkit.Ctx(t)
	b, err := svc.NewOwner(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	const perSession = 2500
	owners := []messages.Owner{a, a, b, b} // two sessions each
	subs := map[messages.Owner]*Subscription{a: svc.Subscribe(a), b: svc.Subscribe(b)}
	defer subs[a].Close()
	defer subs[b].Close()
	sessions := make([]*Session, len(owners))
	for i, o := range owners {
		if sessions[i], err = svc.Spawn(ctx, o, messages.SpawnRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, sh := range sessions {
		wg.Go(func() {
			for range perSession {
				if _, err := sh.Send(ctx, messages.SendRequest{Text: "x", Submit: true}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for o, sub := range subs {
		mine := map[messages.SessionID]bool{}
		for i, sh := range sessions {
			if owners[i] == o {
				mine[sh.ID()] = true
			}
		}
		last := map[messages.SessionID]uint64{}
		for n := 0; n < 2*perSession; {
			evt, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("after %d events: %v", n, err)
			}
			e, ok := evt.(*protocol.EventSendSettled)
			if !ok {
				continue // the sessions' opening events
			}
			if e.Owner != o || !mine[e.Session] {
				t.Fatalf("owner %s heard %s's send on %s", o.Label(), e.Owner.Label(), e.Session)
			}
			if e.Ticket <= last[e.Session] {
				t.Fatalf("session %s: ticket %d after %d (repeated or reordered)", e.Session, e.Ticket, last[e.Session])
			}
			if last[e.Session] != 0 && e.Ticket != last[e.Session]+1 {
				t.Fatalf("session %s: ticket %d after %d (missed)", e.Session, e.Ticket, last[e.Session])
			}
			// How each send settled depends on the machine's load (a
			// stalled scheduler can make one settle on silence); that
			// every event says so is the point here.
			if e.WaitReason == "" || e.Cause == "" {
				t.Fatalf("event %+v", e)
			}
			last[e.Session] = e.Ticket
			n++
		}
	}
	wg.Wait()
	// Nothing more is pending: no duplicates after the last.
	for _, sub := range subs {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if evt, err := sub.Next(cctx); err == nil {
			t.Fatalf("extra event %#v", evt)
		}
	}
}
