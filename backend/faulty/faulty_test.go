package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/actors"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/faulty"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a service with one faulty backend and one owner, and a record of
// the settlements the service published.
type rig struct {
	t     *testing.T
	svc   *actors.Service
	b     *faulty.Backend
	owner messages.Owner

	mu      sync.Mutex
	settled map[messages.SessionID][]protocol.EventSendSettled
}

func newRig(t *testing.T, b *faulty.Backend) *rig {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.Config(), Tolerate: []error{errInjected}})
	r := &rig{t: t, svc: svc, b: b, settled: map[messages.SessionID][]protocol.EventSendSettled{}}
	sub := svc.System().EventStream.Subscribe(func(e any) {
		if ev, ok := e.(*protocol.EventSendSettled); ok {
			r.mu.Lock()
			r.settled[ev.Session] = append(r.settled[ev.Session], *ev)
			r.mu.Unlock()
		}
	})
	t.Cleanup(func() { svc.System().EventStream.Unsubscribe(sub) }) // before the Shutdown
	if _, err := svc.RegisterBackend(testkit.Ctx(t), b); err != nil {
		t.Fatal(err)
	}
	r.owner = testkit.Owner(t, svc, "faulty-test")
	return r
}

// spawn starts a session that must come up.
func (r *rig) spawn() (messages.SessionID, *faulty.Session) {
	r.t.Helper()
	res, err := r.svc.Spawn(testkit.Ctx(r.t), r.owner, messages.SpawnRequest{})
	if err != nil {
		r.t.Fatalf("spawn: %v", err)
	}
	ss := r.b.Sessions()
	return res.ID(), ss[len(ss)-1]
}

// activity asks the owner through the protocol, which also counts the
// retained cleanup failures.
func (r *rig) activity() protocol.HasOwnerActivityReply {
	r.t.Helper()
	res, err := r.svc.System().Root.RequestFuture(r.svc.PID(), &protocol.HasOwnerActivity{Owner: r.owner}, 10*time.Second).Result()
	if err != nil {
		r.t.Fatalf("owner activity: %v", err)
	}
	return *res.(*protocol.HasOwnerActivityReply)
}

// settlements returns how many sends of id settled, once n did (or fails
// at the deadline): the events are published after the caller is told.
func (r *rig) settlements(id messages.SessionID, n int) []protocol.EventSendSettled {
	r.t.Helper()
	var got []protocol.EventSendSettled
	testkit.WaitFor(r.t, 10*time.Second, fmt.Sprintf("%d settlements published for %s", n, id), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		got = append([]protocol.EventSendSettled(nil), r.settled[id]...)
		return len(got) >= n
	})
	return got
}

// usable proves a session still works: a send settles on its prompt.
func (r *rig) usable(id messages.SessionID) {
	r.t.Helper()
	res, err := r.sendAfterSettled(testkit.Ctx(r.t), id, messages.SendRequest{Text: "echo ok", Submit: true})
	if err != nil || res.WaitReason != messages.WaitStdinRead || !strings.Contains(res.Viewport, "echo ok") {
		r.t.Fatalf("session not usable: %+v, %v", res, err)
	}
}

// sendAfterSettled sends once; the caller has seen the session's previous
// send settle (its Send or Result returned). A failed send frees the slot
// before its caller is told; one that settled before its write or SIGINT
// goroutine reported keeps the slot until it does (so no late signal
// reaches the next send), and StartSend waits for that itself. So
// SEND_ACTIVE here is a regression and fails the test.
func (r *rig) sendAfterSettled(ctx context.Context, id messages.SessionID, req messages.SendRequest) (messages.SendResult, error) {
	r.t.Helper()
	res, err := r.svc.Session(r.owner, id).Send(ctx, req)
	if errors.Is(err, messages.ErrSendActive) {
		r.t.Fatalf("send to %s after its previous send settled: %v", id, err)
	}
	return res, err
}

// waitIdle waits until the owner has no activity left.
func (r *rig) waitIdle() {
	r.t.Helper()
	testkit.WaitFor(r.t, 10*time.Second, "the owner's activity to end", func() bool { return !r.activity().Active })
}

// closeAll disposes the owner; it must end with no activity left.
func (r *rig) closeAll() error {
	r.t.Helper()
	err := r.svc.DisposeOwner(testkit.Ctx(r.t), r.owner)
	return err
}

var errInjected = errors.New("injected fault")

// cancelOnEntry returns a context that ends with cause once op entered
// b the n-th time: the caller gives up while the backend is stuck in it.
func cancelOnEntry(t *testing.T, b *faulty.Backend, op faulty.Op, n int, cause error) context.Context {
	ctx, cancel := context.WithCancelCause(testkit.Ctx(t))
	go func() {
		if b.Entered(testkit.Ctx(t), op, n) == nil {
			cancel(cause)
		}
	}()
	return ctx
}

// A script that asks an operation for a fault it cannot express fails at
// once, naming both, instead of testing nothing.
func TestScriptRejectsImpossibleFault(t *testing.T) {
	for _, tc := range []struct {
		op faulty.Op
		f  faulty.Fault
	}{
		{faulty.OpSignal, faulty.Hang()},
		{faulty.OpWrite, faulty.Panic("x")},
		{faulty.OpSpawn, faulty.Unknown()},
		{faulty.OpClose, faulty.Bytewise()},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.f.String()) || !strings.Contains(msg, string(tc.op)) {
					t.Errorf("Script(%s, %s): panic %q, want one naming both", tc.op, tc.f, msg)
				}
			}()
			faulty.New("x").Script(tc.op, tc.f)
		}()
	}
}
