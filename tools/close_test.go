package tools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyactor/ptyactor/backend"
	"github.com/ptyactor/ptyactor/backend/local"
	"github.com/ptyactor/ptyactor/messages"
	"github.com/ptyactor/ptyactor/record"
	"github.com/ptyactor/ptyactor/test/testkit"
)

// terminal_close's text names the record of a recorded session, its
// chain's end and the command that plays it: the file it names
// verifies at the hash it gives.
func TestCloseTextNamesRecording(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "recordings")
	svc := testkit.Service(t, testkit.ServiceOptions{Backends: []backend.Backend{
		local.New(local.Options{Record: local.Record{Dir: dir}}),
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts, err := New(svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := testkit.Owner(t, svc, "agent")
	sp, err := svc.Spawn(ctx, owner, messages.SpawnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.Call(ctx, owner, TerminalClose, []byte(`{"sessionId":"`+string(sp.ID())+`"}`))
	v, ok := r.Structured.(CloseValue)
	if r.IsError || !ok || v.Recording == nil {
		t.Fatalf("close: %q %+v", r.Text, r.Structured)
	}
	rec := v.Recording
	if filepath.Dir(rec.Path) != dir {
		t.Fatalf("recording %s, want one in %s", rec.Path, dir)
	}
	want := "closed terminal session " + string(sp.ID()) + "\n[recording: " + rec.Path + ", "
	if !strings.HasPrefix(r.Text, want) || !strings.Contains(r.Text, "ptyrec play "+rec.Path) || !strings.Contains(r.Text, "chain sha256 "+rec.SHA256) {
		t.Fatalf("close text %q, want it to begin %q and name its hash and ptyrec play", r.Text, want)
	}
	rep, err := record.VerifyFile(rec.Path, nil)
	if err != nil || !rep.Closed || rep.Last != rec.SHA256 {
		t.Fatalf("verify %s: %+v, %v; the text gave sha256 %s", rec.Path, rep, err, rec.SHA256)
	}
}
