package test

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/protocol"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// ask drives the service with a plain actor request and the reply type the
// protocol documents.
func ask[R any](t *testing.T, sys *actor.ActorSystem, pid *actor.PID, msg any) R {
	t.Helper()
	res, err := sys.Root.RequestFuture(pid, msg, 15*time.Second).Result()
	if err != nil {
		t.Fatalf("%T: %v", msg, err)
	}
	r, ok := res.(R)
	if !ok {
		var zero R
		t.Fatalf("%T: reply %T, want %T", msg, res, zero)
	}
	return r
}

// containsString walks v (bounded, cycle-safe) and reports whether any
// string in it contains needle.
func containsString(v reflect.Value, needle string, depth int, seen map[uintptr]bool) bool {
	if depth > 12 || !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		return strings.Contains(v.String(), needle)
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return false
		}
		seen[v.Pointer()] = true
		return containsString(v.Elem(), needle, depth+1, seen)
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		if err, ok := v.Interface().(error); ok && strings.Contains(err.Error(), needle) {
			return true
		}
		return containsString(v.Elem(), needle, depth+1, seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if containsString(v.Field(i), needle, depth+1, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len() && i < 1024; i++ {
			if containsString(v.Index(i), needle, depth+1, seen) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if containsString(it.Key(), needle, depth+1, seen) || containsString(it.Value(), needle, depth+1, seen) {
				return true
			}
		}
	}
	return false
}

// Item 17: an integration can drive the runtime with plain actor messages
// and audit it on the event stream, which never carries terminal text.
func TestMessageDriven(t *testing.T) {
	h := &harness{t: t, tag: randHex(8)}
	t.Cleanup(func() { h.checkNoTagged("after Shutdown") })
	svc := testkit.Service(t, testkit.ServiceOptions{Config: testkit.PTYConfig()})
	sys, pid := svc.System(), svc.PID()

	var (
		mu     sync.Mutex
		events []any
	)
	sub := sys.EventStream.Subscribe(func(evt any) {
		mu.Lock()
		events = append(events, evt)
		mu.Unlock()
	})
	defer sys.EventStream.Unsubscribe(sub)

	backend := local.New(h.options(local.Options{Type: "bash"}))
	if r := ask[*protocol.RegisterBackendReply](t, sys, pid, &protocol.RegisterBackend{Backend: backend}); r.Err != nil {
		t.Fatalf("RegisterBackend: %v", r.Err)
	}
	if r := ask[*protocol.ListBackendsReply](t, sys, pid, &protocol.ListBackends{}); len(r.Types) != 1 || r.Types[0] != "bash" {
		t.Fatalf("ListBackends: %v", r.Types)
	}
	owner := messages.NewOwner("integration")
	if r := ask[*protocol.OpenOwnerReply](t, sys, pid, &protocol.OpenOwner{Owner: owner}); r.Err != nil {
		t.Fatalf("OpenOwner: %v", r.Err)
	}
	sp := ask[*protocol.SpawnReply](t, sys, pid, &protocol.Spawn{Owner: owner, Request: messages.SpawnRequest{Type: "bash", Name: "wire"}})
	if sp.Err != nil {
		t.Fatalf("Spawn: %v", sp.Err)
	}
	trackShell(sp.Result.PID)
	id := sp.Result.SessionID

	ss := ask[*protocol.StartSendReply](t, sys, pid, &protocol.StartSend{Owner: owner, Session: id, Request: messages.SendRequest{Text: "echo MSG-$((6*7))", Submit: true}})
	if ss.Err != nil {
		t.Fatalf("StartSend: %v", ss.Err)
	}
	// Wait for the settlement on the event stream, then collect it: an
	// AwaitSend racing the settlement is TestAwaitSendRacingSettlementIsAnswered.
	testkit.WaitFor(t, 10*time.Second, "EventSendSettled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			if e, ok := e.(*protocol.EventSendSettled); ok && e.Session == id {
				return true
			}
		}
		return false
	})
	settled := ask[*protocol.SendSettled](t, sys, pid, &protocol.AwaitSend{Owner: owner, Session: id, Ticket: ss.Ticket})
	if settled.Err != nil || settled.Ticket != ss.Ticket || settled.Session != id {
		t.Fatalf("AwaitSend: %+v", settled)
	}
	res := settled.Result
	if res.WaitReason != messages.WaitStdinRead || res.ExitCode == nil || *res.ExitCode != 0 || !hasLine(res.Viewport, "MSG-42") {
		t.Fatalf("send result %+v", res)
	}
	// Awaiting a settled send again answers at once with the same result.
	if again := ask[*protocol.SendSettled](t, sys, pid, &protocol.AwaitSend{Owner: owner, Session: id, Ticket: ss.Ticket}); again.Result.Viewport != res.Viewport {
		t.Fatalf("second AwaitSend: %+v", again)
	}
	if l := ask[*protocol.ListReply](t, sys, pid, &protocol.List{Owner: owner}); len(l.Sessions) != 1 || l.Sessions[0].SessionID != id || l.Sessions[0].Name != "wire" {
		t.Fatalf("List: %+v", l.Sessions)
	}
	k := ask[*protocol.KillReply](t, sys, pid, &protocol.Kill{Owner: owner, Session: id})
	if k.Err != nil || !k.Closed || len(k.Report.Survivors) != 0 {
		t.Fatalf("Kill: %+v", k)
	}
	testkit.WaitFor(t, 10*time.Second, "an empty List after Kill", func() bool {
		return len(ask[*protocol.ListReply](t, sys, pid, &protocol.List{Owner: owner}).Sessions) == 0
	})

	snapshot := func() []any {
		mu.Lock()
		defer mu.Unlock()
		return append([]any(nil), events...)
	}
	find := func(evs []any, typ reflect.Type) int {
		for i, e := range evs {
			if reflect.TypeOf(e) == typ {
				return i
			}
		}
		return -1
	}
	tClosed := reflect.TypeOf(&protocol.EventSessionClosed{})
	testkit.WaitFor(t, 10*time.Second, "EventSessionClosed", func() bool { return find(snapshot(), tClosed) >= 0 })
	evs := snapshot()
	iOpen := find(evs, reflect.TypeOf(&protocol.EventSessionOpened{}))
	iSettled := find(evs, reflect.TypeOf(&protocol.EventSendSettled{}))
	iClosed := find(evs, tClosed)
	if iOpen < 0 || iSettled < 0 || !(iOpen < iSettled && iSettled < iClosed) {
		t.Fatalf("events out of order or missing: opened %d, settled %d, closed %d in %d events", iOpen, iSettled, iClosed, len(evs))
	}
	if e := evs[iOpen].(*protocol.EventSessionOpened); e.Owner != owner || e.Snapshot.SessionID != id || e.Snapshot.PID != sp.Result.PID {
		t.Fatalf("EventSessionOpened %+v", e)
	}
	if e := evs[iSettled].(*protocol.EventSendSettled); e.Session != id || e.WaitReason != messages.WaitStdinRead || e.ExitCode == nil || *e.ExitCode != 0 || e.Err != nil {
		t.Fatalf("EventSendSettled %+v", e)
	}
	if e := evs[iClosed].(*protocol.EventSessionClosed); e.Session != id || e.Reason != "model request" || len(e.Report.Survivors) != 0 {
		t.Fatalf("EventSessionClosed %+v", e)
	}
	// No event carries terminal text: the event types have no text fields,
	// and nothing published holds the command's output.
	for _, e := range evs {
		typ := reflect.TypeOf(e)
		if typ.Kind() == reflect.Pointer && typ.Elem().PkgPath() == reflect.TypeOf(protocol.EventSessionOpened{}).PkgPath() {
			for _, f := range []string{"Viewport", "Text", "Delta", "Motd", "Output"} {
				if _, ok := typ.Elem().FieldByName(f); ok {
					t.Errorf("event %s has a terminal text field %s", typ, f)
				}
			}
		}
		if containsString(reflect.ValueOf(e), "MSG-42", 0, map[uintptr]bool{}) {
			t.Errorf("event %T carries terminal output: %+v", e, e)
		}
	}
}
