package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/ptyactor/ptyactor/actors/remote/internal/endpoint"
	"github.com/ptyactor/ptyactor/actors/remote/wire"
	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/test/testkit"
	"github.com/rs/zerolog"
)

// An owner's capability token works only for requests stamped with the
// TLS identity of the client that opened it; from another identity it is
// answered as a wrong token (Spawn: OWNER_NOT_LIVE, a session request:
// NO_SESSION), and so is its resume token. The requests are delivered as
// the endpoint delivers them: an envelope with the stamped header.
// startGateway runs a gateway on a fresh service and returns a function
// that delivers a request as the endpoint would (an envelope stamped with
// the TLS identity, "" for none) and waits for its reply.
func startGateway(t *testing.T, cfg Config) func(identity, client string, req *wire.Request) *wire.Reply {
	t.Helper()
	ask, _ := startGatewayOn(t, cfg)
	return ask
}

// startGatewayOn is startGateway that also returns the actor system.
func startGatewayOn(t *testing.T, cfg Config) (func(identity, client string, req *wire.Request) *wire.Reply, *actor.ActorSystem) {
	t.Helper()
	return startGatewayWith(t, cfg, local.Options{})
}

// startGatewayWith is startGatewayOn with the local backend's options.
func startGatewayWith(t *testing.T, cfg Config, opts local.Options) (func(identity, client string, req *wire.Request) *wire.Reply, *actor.ActorSystem) {
	t.Helper()
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{local.New(opts)}})
	sys := svc.System()
	cfg.MaxRequestBytes, cfg.Log = 1<<20, zerolog.Nop()
	g := newGateway(svc, cfg)
	gw, err := sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return g }), "test-gateway")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sys.Root.PoisonFuture(gw).Wait() })
	replies := make(chan *wire.Reply, 16)
	probe := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if r, ok := ctx.Message().(*wire.Reply); ok {
			replies <- r
		}
	}))
	t.Cleanup(func() { _ = sys.Root.PoisonFuture(probe).Wait() })

	var call uint64
	ask := func(identity, client string, req *wire.Request) *wire.Reply {
		t.Helper()
		call++
		req.Call, req.Client = call, client
		var h map[string]string
		if identity != "" {
			h = map[string]string{endpoint.PeerHeader: identity}
		}
		sys.Root.Send(gw, &actor.MessageEnvelope{Header: h, Message: req, Sender: probe})
		for {
			select {
			case r := <-replies:
				if r.Call == call {
					return r
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no reply to call %d", call)
			}
		}
	}
	return ask, sys
}

func TestGatewayBindsTokensToIdentity(t *testing.T) {
	ask2 := startGateway(t, Config{ClientLoss: time.Minute, ClientGrace: time.Minute})
	ask := func(identity string, req *wire.Request) *wire.Reply {
		t.Helper()
		return ask2(identity, "c-"+identity, req)
	}
	spawn := func(identity, token string) *wire.Reply {
		return ask(identity, &wire.Request{Token: token, Body: &wire.Request_Spawn{Spawn: &wire.Spawn{Name: "s"}}})
	}

	open := ask("A", &wire.Request{Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: "a"}}})
	token, resume := open.GetOpenOwner().GetToken(), open.GetOpenOwner().GetResumeToken()
	if open.Error != nil || token == "" || resume == "" {
		t.Fatalf("open: %v", open)
	}
	for _, other := range []string{"B", ""} {
		if r := spawn(other, token); !errors.Is(wire.ErrorFrom(r.Error), messages.ErrOwnerNotLive) {
			t.Fatalf("spawn with A's token as %q: %v", other, r)
		}
	}
	sp := spawn("A", token)
	if sp.Error != nil {
		t.Fatalf("spawn as A: %v", wire.ErrorFrom(sp.Error))
	}
	id := sp.GetSpawn().GetSnapshot().GetSession()
	describe := func(identity string) *wire.Reply {
		return ask(identity, &wire.Request{Token: token, Body: &wire.Request_Describe{Describe: &wire.Describe{Session: id}}})
	}
	if r := describe("B"); !errors.Is(wire.ErrorFrom(r.Error), messages.ErrNoSession) {
		t.Fatalf("describe as B: %v", r)
	}
	if r := describe("A"); r.Error != nil {
		t.Fatalf("describe as A: %v", wire.ErrorFrom(r.Error))
	}
	resumeAs := func(identity string) *wire.Reply {
		return ask(identity, &wire.Request{Body: &wire.Request_ResumeOwner{ResumeOwner: &wire.ResumeOwner{ResumeToken: resume}}})
	}
	if r := resumeAs("B"); !errors.Is(wire.ErrorFrom(r.Error), messages.ErrOwnerNotLive) {
		t.Fatalf("resume as B: %v", r)
	}
	// B's refusal changed nothing: A's capability token still works.
	if r := describe("A"); r.Error != nil {
		t.Fatalf("describe as A after B's resume: %v", wire.ErrorFrom(r.Error))
	}
	r := resumeAs("A")
	if r.Error != nil || len(r.GetResumeOwner().GetSessions()) != 1 {
		t.Fatalf("resume as A: %v", r)
	}
	token = r.GetResumeOwner().GetToken()
	if r := ask("A", &wire.Request{Token: token, Body: &wire.Request_DisposeOwner{DisposeOwner: &wire.DisposeOwner{}}}); r.Error != nil {
		t.Fatalf("dispose: %v", wire.ErrorFrom(r.Error))
	}
}

// A client is its id as heard over one TLS identity: another admitted
// certificate that sends heartbeats under the same client id does not keep
// it alive, so the owner of a silent client still expires after the loss
// window and the grace.
func TestHeartbeatFromAnotherIdentityKeepsNoClientAlive(t *testing.T) {
	ask := startGateway(t, Config{ClientLoss: 300 * time.Millisecond, ClientGrace: 100 * time.Millisecond})
	open := ask("A", "c", &wire.Request{Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: "a"}}})
	token := open.GetOpenOwner().GetToken()
	if open.Error != nil || token == "" {
		t.Fatalf("open: %v", open)
	}
	sp := ask("A", "c", &wire.Request{Token: token, Body: &wire.Request_Spawn{Spawn: &wire.Spawn{Name: "s"}}})
	if sp.Error != nil {
		t.Fatalf("spawn: %v", wire.ErrorFrom(sp.Error))
	}
	id := sp.GetSpawn().GetSnapshot().GetSession()
	// Client "c" of A falls silent; B heartbeats as "c". A's own identity
	// looks on through another client id, which is not "c" of A either.
	beat := time.NewTicker(50 * time.Millisecond)
	defer beat.Stop()
	deadline := time.After(20 * time.Second)
	for {
		if r := ask("B", "c", &wire.Request{Body: &wire.Request_Heartbeat{Heartbeat: &wire.Heartbeat{}}}); r.Error != nil {
			t.Fatalf("heartbeat as B: %v", wire.ErrorFrom(r.Error))
		}
		r := ask("A", "watcher", &wire.Request{Token: token, Body: &wire.Request_Describe{Describe: &wire.Describe{Session: id}}})
		if errors.Is(wire.ErrorFrom(r.Error), messages.ErrNoSession) {
			return // expired: the token stopped working and the session is gone
		}
		if r.Error != nil {
			t.Fatalf("describe: %v", wire.ErrorFrom(r.Error))
		}
		select {
		case <-beat.C:
		case <-deadline:
			t.Fatal("A's silent client was kept alive by B's heartbeats under its id")
		}
	}
}

// A spawn refused at the client's session limit is answered, and its
// relay goes with it: refusals leave nothing registered behind.
func TestSessionLimitRefusalLeavesNoRelay(t *testing.T) {
	ask, sys := startGatewayOn(t, Config{ClientLoss: time.Minute, ClientGrace: time.Minute, MaxSessionsPerClient: 1})
	open := ask("", "c", &wire.Request{Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: "a"}}})
	token := open.GetOpenOwner().GetToken()
	spawn := &wire.Request{Token: token, Body: &wire.Request_Spawn{Spawn: &wire.Spawn{Name: "s"}}}
	if r := ask("", "c", spawn); r.Error != nil {
		t.Fatalf("first spawn: %v", r)
	}
	for range 5 {
		if r := ask("", "c", spawn); !errors.Is(wire.ErrorFrom(r.Error), messages.ErrSessionLimit) {
			t.Fatalf("spawn over the limit: %v, want ErrSessionLimit", r)
		}
	}
	// Every call was answered for good: no relay may be left.
	var relays []string
	for _, bucket := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, k := range bucket.Keys() {
			if strings.HasPrefix(k, "ptyhost-relay") {
				relays = append(relays, k)
			}
		}
	}
	if len(relays) != 0 {
		t.Fatalf("relays left registered after the answered calls: %v", relays)
	}
}

// A record is the client's that closed the session: the same client id
// over the same TLS identity. Another identity presenting that client id,
// or another client id, or an unknown session, is refused alike.
func TestFetchRecordingIsTheClosingClients(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recordings")
	ask, _ := startGatewayWith(t, Config{ClientLoss: time.Minute, ClientGrace: time.Minute}, local.Options{Record: local.Record{Dir: dir}})
	open := ask("A", "c1", &wire.Request{Body: &wire.Request_OpenOwner{OpenOwner: &wire.OpenOwner{Label: "a"}}})
	token := open.GetOpenOwner().GetToken()
	sp := ask("A", "c1", &wire.Request{Token: token, Body: &wire.Request_Spawn{Spawn: &wire.Spawn{ClientSession: "pty-client-1"}}})
	if sp.Error != nil {
		t.Fatalf("spawn: %v", wire.ErrorFrom(sp.Error))
	}
	kill := ask("A", "c1", &wire.Request{Token: token, Body: &wire.Request_Kill{Kill: &wire.Kill{Session: sp.GetSpawn().GetSnapshot().GetSession()}}})
	rec := kill.GetKill().GetRecording()
	if kill.Error != nil || rec == nil {
		t.Fatalf("kill: %v, %v", wire.ErrorFrom(kill.Error), kill)
	}
	fetch := func(identity, client, session string) *wire.Reply {
		return ask(identity, client, &wire.Request{Body: &wire.Request_FetchRecording{FetchRecording: &wire.FetchRecording{ClientSession: session}}})
	}
	r := fetch("A", "c1", "pty-client-1")
	f := r.GetFetchRecording()
	if r.Error != nil || f == nil || uint64(len(f.GetData())) != f.GetSize() || f.GetRecording().GetSha256() != rec.GetSha256() {
		t.Fatalf("the closing client's fetch: %v, %v", wire.ErrorFrom(r.Error), f)
	}
	if b, err := os.ReadFile(rec.GetPath()); err != nil || !bytes.Equal(b, f.GetData()) {
		t.Fatalf("fetched bytes are not the file's (%v)", err)
	}
	// From the end: nothing more, and the size.
	end := ask("A", "c1", &wire.Request{Body: &wire.Request_FetchRecording{FetchRecording: &wire.FetchRecording{ClientSession: "pty-client-1", Offset: f.GetSize()}}})
	if end.Error != nil || len(end.GetFetchRecording().GetData()) != 0 || end.GetFetchRecording().GetSize() != f.GetSize() {
		t.Fatalf("a fetch at the end: %v, %v", wire.ErrorFrom(end.Error), end)
	}
	for _, c := range []struct{ identity, client, session string }{
		{"B", "c1", "pty-client-1"}, // another certificate naming the same client id
		{"", "c1", "pty-client-1"},  // no certificate
		{"A", "c2", "pty-client-1"}, // another client of the same identity
		{"A", "c1", "pty-client-2"}, // a session never closed here
		{"A", "c1", rec.GetPath()},  // a path is no session id
	} {
		if r := fetch(c.identity, c.client, c.session); !errors.Is(wire.ErrorFrom(r.Error), messages.ErrNoRecording) {
			t.Fatalf("fetch %+v: %v, want NO_RECORDING", c, r)
		}
	}
}

// The kept records are bounded per client, oldest dropped first, and
// forgotten after keptRecordsFor.
func TestKeptRecordsBounded(t *testing.T) {
	g := newGateway(nil, Config{})
	rec := &ownerRec{identity: "A", client: &clientRec{id: "c1"}}
	for i := range keptRecords + 3 {
		g.keepRecord(rec, fmt.Sprintf("s%d", i), messages.Recording{Path: fmt.Sprintf("/r/%d.rec", i)})
	}
	cr := g.records[clientKey("A", "c1")]
	if len(cr.byID) != keptRecords || len(cr.order) != keptRecords || cr.byID["s0"] != nil || cr.byID["s3"] == nil {
		t.Fatalf("kept %d (order %d); s0 %v, s3 %v", len(cr.byID), len(cr.order), cr.byID["s0"], cr.byID["s3"])
	}
	g.expireRecords(time.Now().Add(keptRecordsFor))
	if len(g.records) != 0 {
		t.Fatalf("after an hour: %d clients' records kept", len(g.records))
	}
}
